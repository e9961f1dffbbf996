// book_outputs.h — the textbook's printed outputs, copied verbatim from the book's text
// (/work/shared/seeds/: textbook-15.9 Output 15.9.1, textbook-15.2 Output 15.2.1), for the tests
// that compare `dpscale predict --textbook` with them character for character.
#pragma once

namespace dpscale::test {

inline constexpr const char* kOutput1591 = R"BOOK(    K   compute     comm     load      step  speedup   eff%  dominant bottleneck
------------------------------------------------------------------------------
    1    819.2      0.0    682.7    819.2     1.0x   100  compute-bound (overlap wins)
    2    409.6     80.0    341.3    409.6     2.0x   100  compute-bound (overlap wins)
    4    204.8    120.0    170.7    204.8     4.0x   100  compute-bound (overlap wins)
    8    102.4    140.0     85.3    140.0     5.9x    73  communication-bound
   16     51.2    150.0     42.7    150.0     5.5x    34  communication-bound
   32     25.6    155.0     21.3    155.0     5.3x    17  communication-bound
   64     12.8    157.5     10.7    157.5     5.2x     8  communication-bound
  128      6.4    158.8      5.3    158.8     5.2x     4  communication-bound
  256      3.2    159.4      2.7    159.4     5.1x     2  communication-bound
)BOOK";

inline constexpr const char* kOutput1521 = R"BOOK(model parameters        : 1,000,000,000
gradient payload (fp16) : 2.00 GB
compute per step        : 250 ms

intra-node all-reduce   :   11.68 ms   (NVSwitch ~300 GB/s)
inter-node all-reduce   :  280.07 ms   (InfiniBand ~12.5 GB/s)
inter/intra slowdown    :    24.0x

scaling efficiency intra:   95.5 %
scaling efficiency inter:   47.2 %
efficiency lost crossing nodes:  48.4 percentage points
)BOOK";

}  // namespace dpscale::test
