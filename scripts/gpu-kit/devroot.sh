#!/usr/bin/env bash
# devroot.sh — the headers, static libraries and CMake package files dpscale builds against, laid
# out as a prefix (include/, lib/x86_64-linux-gnu/, share/cmake/) for gpu-kit.sh's src.tar.xz:
# with it, build-here.sh rebuilds dpscale on a GPU machine that has nvcc and CMake but none of
# Debian's -dev packages. Shared libraries are not copied: the kit's payload has them, and
# build-here.sh links against those (one copy of OpenBLAS, not two).
#
#   scripts/gpu-kit/devroot.sh OUT_DIR          (called by scripts/gpu-kit.sh)
set -euo pipefail
OUT=$1
ARCH=$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)
LIB=/usr/lib/$ARCH
mkdir -p "$OUT/include/mpi" "$OUT/include/openblas" "$OUT/lib/$ARCH/cmake" "$OUT/share/cmake"

# Header-only libraries and their CMake packages, as Debian lays them out (their Targets files
# find the prefix from their own location, so they work from anywhere).
cp -r /usr/include/nlohmann /usr/include/CLI "$OUT/include/"
cp -r /usr/share/cmake/nlohmann_json /usr/share/cmake/CLI11 "$OUT/share/cmake/"
# GoogleTest (static) and Google Benchmark (its Targets file names the versioned .so).
cp -r /usr/include/gtest /usr/include/gmock /usr/include/benchmark "$OUT/include/"
cp "$LIB"/libgtest.a "$LIB"/libgtest_main.a "$LIB"/libgmock.a "$LIB"/libgmock_main.a "$LIB"/libbenchmark_main.a "$OUT/lib/$ARCH/"
cp -P "$LIB"/libbenchmark.so* "$OUT/lib/$ARCH/"
cp -r "$LIB"/cmake/GTest "$LIB"/cmake/benchmark "$OUT/lib/$ARCH/cmake/"
# zlib's headers (the GPU machine has libz.so.1, not always zlib.h).
cp /usr/include/zlib.h /usr/include/zconf.h "$OUT/include/"
# MPI's C headers only (no C++ bindings are used: OMPI_SKIP_MPICXX).
MPI_INC=$(mpicc -showme:incdirs 2>/dev/null | awk '{print $1}')
cp "$MPI_INC"/mpi.h "$MPI_INC"/mpi_portable_platform.h "$MPI_INC"/mpi-ext.h "$OUT/include/mpi/" 2>/dev/null ||
  cp "$MPI_INC"/mpi.h "$OUT/include/mpi/"
# OpenBLAS: its headers; the Config file points at the kit's libopenblas.so.0 through a
# variable build-here.sh sets (DPSCALE_KIT_LIB).
OPENBLAS_INC=$(sed -n 's/^SET(OpenBLAS_INCLUDE_DIRS \(.*\))/\1/p' "$LIB"/cmake/openblas/OpenBLASConfig.cmake)
cp "$OPENBLAS_INC"/*.h "$OUT/include/openblas/"
mkdir -p "$OUT/lib/$ARCH/cmake/openblas"
cat > "$OUT/lib/$ARCH/cmake/openblas/OpenBLASConfig.cmake" <<'EOF'
# OpenBLASConfig.cmake — the GPU kit's OpenBLAS: headers here, the library in the kit's payload.
get_filename_component(_ob_prefix "${CMAKE_CURRENT_LIST_DIR}/../../../.." ABSOLUTE)
set(OpenBLAS_INCLUDE_DIRS "${_ob_prefix}/include/openblas")
set(OpenBLAS_LIBRARIES "${DPSCALE_KIT_LIB}/libopenblas.so.0")
set(OpenBLAS_FOUND TRUE)
EOF
echo "set(PACKAGE_VERSION 0.3.21)
set(PACKAGE_VERSION_COMPATIBLE TRUE)" > "$OUT/lib/$ARCH/cmake/openblas/OpenBLASConfigVersion.cmake"
