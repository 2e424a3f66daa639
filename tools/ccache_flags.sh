#!/usr/bin/env bash
# Prints the CMake flags that put ccache in front of the C, C++ and CUDA compilers when ccache
# is installed (tools/setup.sh installs it), else nothing.
if command -v ccache >/dev/null; then
  echo "-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache" \
       "-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"
fi
