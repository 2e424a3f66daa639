#!/usr/bin/env bash
# Prints the CMake flags that put ccache in front of the C, C++ and CUDA compilers when ccache
# is installed (tools/setup.sh installs it), else nothing. The precompiled headers of
# AUTOTUNE_PRECOMPILED_HEADERS are cached too only with the sloppiness ccache's manual names
# for them (pch_defines, time_macros; Debian 12's ccache 4.7 reads it from the environment).
if command -v ccache >/dev/null; then
  sloppiness=pch_defines,time_macros,include_file_mtime,include_file_ctime
  launcher="env;CCACHE_SLOPPINESS=$sloppiness;ccache"
  echo "-DCMAKE_C_COMPILER_LAUNCHER=$launcher -DCMAKE_CXX_COMPILER_LAUNCHER=$launcher" \
       "-DCMAKE_CUDA_COMPILER_LAUNCHER=$launcher"
fi
