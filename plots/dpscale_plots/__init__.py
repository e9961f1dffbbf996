"""dpscale_plots — the charts of plots/plot_results.py, as a small package.

    load.py            read and check the report JSON of `dpscale report --format json`
    points.py          the report's points and the lookups charts need (no statistics)
    style.py           names, colours, units, the figure frame, saving PNG/SVG
    charts_bars.py     1 epoch time, 3 naive compute/comm split, 4 saving vs naive, 6 throughput
    charts_scaling.py  2 speedup vs K, 8 efficiency E(K) and gamma(K) with the knee
    charts_training.py 5 loss convergence (loss_rank0 vs loss_global), 7 bucket-cap sweep
    charts_diagnosis.py 9 where each epoch goes, 10 per-rank compute and wait
    charts_axes.py     11 2-byte gradients, 12 accumulation, 13 all-reduce busbw per bucket size
                       (each drawn when the sweep varies that option)
    charts_memory.py   14 memory per rank and speedup against K, DDP beside each sharded stage
                       (drawn when the file holds sharded runs)
"""
from .charts_bars import (chart1_epoch_time, chart3_naive_split, chart4_overlap_saving,
                          chart6_throughput)
from .charts_scaling import chart2_speedup, chart8_efficiency
from .charts_training import chart5_loss, chart7_bucket_sweep
from .charts_diagnosis import chart9_time_breakdown, chart10_per_rank
from .charts_axes import chart11_grad_comm, chart12_accum_steps, chart13_allreduce_busbw
from .charts_memory import chart14_memory_per_rank

# File stem -> drawing function, in the workshop's order (its charts 1-6, then ours).
CHARTS = [
    ("chart1_epoch_time", chart1_epoch_time),
    ("chart2_speedup", chart2_speedup),
    ("chart3_naive_comm_split", chart3_naive_split),
    ("chart4_overlap_vs_naive", chart4_overlap_saving),
    ("chart5_loss_convergence", chart5_loss),
    ("chart6_throughput", chart6_throughput),
    ("chart7_bucket_cap_sweep", chart7_bucket_sweep),
    ("chart8_efficiency_knee", chart8_efficiency),
    # Why each run scaled as it did (skipped for records without the diagnosis fields)
    ("chart9_time_breakdown", chart9_time_breakdown),
    ("chart10_per_rank", chart10_per_rank),
    # the option axes a sweep varied (skipped unless the points differ in that option)
    ("chart11_grad_comm", chart11_grad_comm),
    ("chart12_accum_steps", chart12_accum_steps),
    ("chart13_allreduce_busbw", chart13_allreduce_busbw),
    # what sharding saves per rank (skipped unless the file holds sharded runs)
    ("chart14_memory_per_rank", chart14_memory_per_rank),
]
