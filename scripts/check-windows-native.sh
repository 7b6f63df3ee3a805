#!/usr/bin/env bash
# Windows x64 check of the native runtime without a Windows machine: cross-compiles the core, CPU backend, packer
# and native tests with MinGW-w64, runs the CPU tests under Wine (the _WIN32 file mapping and thread code really
# execute), and compiles the Node addon sources for Windows (syntax and types; linking needs node.lib, which
# cmake-js fetches on a Windows build machine). CUDA is not part of it: nvcc compiles those sources on Linux CI.
# Needs: apt-get install --no-install-recommends g++-mingw-w64-x86-64-posix wine64
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${HORIZON_WINDOWS_BUILD:-$root/native/build-windows}"
cxx=x86_64-w64-mingw32-g++-posix
command -v "$cxx" >/dev/null || { echo "check-windows: $cxx not found (apt-get install g++-mingw-w64-x86-64-posix)" >&2; exit 1; }
wine="$(command -v wine64 || command -v wine || true)"
[ -z "$wine" ] && [ -x /usr/lib/wine/wine64 ] && wine=/usr/lib/wine/wine64
[ -n "$wine" ] || { echo "check-windows: wine64 not found (apt-get install --no-install-recommends wine64)" >&2; exit 1; }

cmake -S "$root/native" -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$root/native/cmake/mingw-w64-x86_64.cmake" \
  -DCMAKE_CROSSCOMPILING_EMULATOR="$wine" -DRT_CUDA=OFF -DRT_ADDON=OFF >/dev/null
cmake --build "$build" --parallel 2
export WINEPREFIX="$build/wineprefix" WINEDEBUG=-all
ctest --test-dir "$build" -L cpu --output-on-failure --no-tests=error

node_include="$(node -p "require('path').resolve(process.execPath, '..', '..', 'include', 'node')")"
for src in "$root"/native/addon/*.cc; do
  "$cxx" -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I"$root/native/include" -I"$root/native/src" \
    -I"$root/node_modules/node-addon-api" -I"$node_include" \
    -DNAPI_VERSION=8 -DNAPI_DISABLE_CPP_EXCEPTIONS=0 -DNODE_ADDON_API_CPP_EXCEPTIONS "$src"
done
echo "check-windows: runtime built for Windows x64, CPU tests passed under $("$wine" --version 2>/dev/null || echo Wine), addon sources compile"
