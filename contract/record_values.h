// record_values.h — the numbers a record can hold. A run takes a positive time, trains at a
// non-negative rate on at least one rank; a record that says otherwise (a negative epoch time,
// a zero batch, a NaN where a time belongs) was made by hand or broken on the way, and every
// table, speedup and verdict computed from it would be nonsense ("1.56x -> -1.71x", "+nan%").
// The results file's reader (harness/results/sweep_line.cpp) refuses its line, so `dpscale report`,
// `compare`, `plot` and `predict` all refuse it with one message naming the field, before
// computing anything. record_from_json itself checks only types: it reads any record back.
#pragma once

#include "contract/record.h"

namespace dpscale {

// Throws std::runtime_error "record field 'avg_epoch_s' must be a positive number (got -1.2)"
// for the first value out of its field's range. Losses are not checked: a diverged run's loss
// is NaN (null) and the record says so truthfully.
void check_record_values(const RunRecord& r);

}  // namespace dpscale
