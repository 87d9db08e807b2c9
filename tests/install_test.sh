#!/usr/bin/env bash
# The installed library as a user outside the tree sees it: `cmake --install` into a fresh
# prefix, then examples/embed.c compiled with pkg-config's flags (shared library) and as a CMake
# project with find_package(pocketlm) (shared and static): all three write the story the
# build's own example writes. The shared library exports pocketlm_* and nothing else.
#   tests/install_test.sh BUILD_DIR MODEL
set -euo pipefail
build=$1 model=$2
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
pc=$(find "$prefix" -name pocketlm.pc | head -1)
[ -n "$pc" ] || { echo "install_test: no pocketlm.pc under $prefix"; exit 1; }
lib=$(dirname "$(dirname "$pc")")
want=$("$build/tests/pocketlm_embed_example" "$model" 2>&1) || { echo "install_test: the build's example failed: $want"; exit 1; }
[ ${#want} -gt 40 ] || { echo "install_test: the example wrote too little: $want"; exit 1; }

# pkg-config: the one-line compile of docs/c-api.md.
PKG_CONFIG_PATH=$(dirname "$pc") cc -std=c99 -Wall -Wextra -pedantic -o "$work/embed_pc" "$src/examples/embed.c" \
  $(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs pocketlm) -Wl,-rpath,"$lib"
got=$("$work/embed_pc" "$model" 2>&1)
[ "$got" = "$want" ] || { echo "install_test: pkg-config build wrote: $got"; exit 1; }

# find_package: shared and static.
cmake -S "$src/tests/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DEMBED_C="$src/examples/embed.c" \
  -DCMAKE_BUILD_RPATH="$lib" >"$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; exit 1; }
cmake --build "$work/consumer" >>"$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; exit 1; }
for e in embed_shared embed_static; do
  got=$("$work/consumer/$e" "$model" 2>&1)
  [ "$got" = "$want" ] || { echo "install_test: $e wrote: $got"; exit 1; }
done
ldd "$work/consumer/embed_static" | grep -q libpocketlm && { echo "install_test: embed_static loads libpocketlm.so"; exit 1; }

# Only the C API is exported.
so=$(ls "$lib"/libpocketlm.so.* | head -1)
# (The linker's own _init, _fini, _edata, _end and __bss_start are in every shared library.)
others=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -vE '^(pocketlm_|_init$|_fini$|_edata$|_end$|__bss_start$)' || true)
[ -z "$others" ] || { echo "install_test: $so exports more than pocketlm_*:"; echo "$others" | head -20; exit 1; }
echo "install_test: pkg-config, find_package (shared, static) ok; $(nm -D --defined-only "$so" | grep -c ' pocketlm_') pocketlm_* symbols exported, nothing else"
