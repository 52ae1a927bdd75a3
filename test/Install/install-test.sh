#!/usr/bin/env bash
# The installed package end to end (docs/Extending.md): installs the build
# tree into WORK/prefix, builds examples/out-of-tree and examples/plugin
# against it with find_package(Sluice), runs the out-of-tree tool, and runs
# the plugin lit tests (test/Plugin) with the installed sluice-opt loading the
# plugin.
#
#   install-test.sh SOURCE_DIR BUILD_DIR WORK_DIR LIT
set -euo pipefail
source_dir=$1 build_dir=$2 work=$3 lit=$4
prefix=$work/prefix

rm -rf "$prefix" "$work/oot" "$work/plugin"
mkdir -p "$work"
echo "== cmake --install $build_dir --prefix $prefix"
cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log"
for f in bin/sluicec bin/sluice-opt lib/cmake/Sluice/SluiceConfig.cmake \
         lib/libSluicePipeline.a include/dialects/sluice/Analysis/DataMovement.h \
         include/dialects/sluice/SluiceOps.h \
         include/dialects/sluice/SluiceOps.h.inc; do
  [ -e "$prefix/$f" ] || { echo "install-test: error: $prefix/$f is missing"; exit 1; }
done

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
configure() {  # NAME SOURCE
  echo "== configure and build $2 against $prefix"
  cmake -G Ninja -S "$2" -B "$work/$1" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}" >"$work/$1.configure.log" ||
    { cat "$work/$1.configure.log"; exit 1; }
  ninja -C "$work/$1" -j2 >"$work/$1.build.log" ||
    { cat "$work/$1.build.log"; exit 1; }
}

configure oot "$source_dir/examples/out-of-tree"
echo "== sluice-fusion-oracle examples/tiny.json"
"$work/oot/sluice-fusion-oracle" "$source_dir/examples/tiny.json" | tee "$work/oracle.txt"
grep -q "^fused: [0-9]* bytes moved" "$work/oracle.txt"
grep -q "^max |y_fused - y_unfused| = " "$work/oracle.txt"

configure plugin "$source_dir/examples/plugin"
echo "== lit test/Plugin with $prefix/bin/sluice-opt"
"$lit" -sv --param sluice_plugin="$work/plugin/SluiceKernelBytes.so" \
  --param installed_sluice_opt="$prefix/bin/sluice-opt" \
  --param installed_sluicec="$prefix/bin/sluicec" "$build_dir/test/Plugin"
