// RUN: sluice-opt %s | FileCheck %s
// RUN: sluice-opt %s | sluice-opt | FileCheck %s

// CHECK-LABEL: sluice.graph @typed_origin_kind
// CHECK: relayout %{{.*}} {sluice.origin = "ln", sluice.origin_kind = #sluice<origin_kind layernorm>}
// CHECK: relayout %{{.*}} {sluice.origin_kind = #sluice<origin_kind layout>}
sluice.graph @typed_origin_kind(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  %a = sluice.relayout %x {sluice.origin = "ln", sluice.origin_kind = #sluice<origin_kind layernorm>} : !sluice.tensor<[i=8], f32> -> !sluice.tensor<[i=8], f32>
  %y = sluice.relayout %a {sluice.origin_kind = #sluice<origin_kind layout>} : !sluice.tensor<[i=8], f32> -> !sluice.tensor<[i=8], f32>
  sluice.return %y : !sluice.tensor<[i=8], f32>
}
