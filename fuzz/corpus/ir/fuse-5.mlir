// m1 -> (view) -> mm -> m2 and m1 -> m2: fusing m1 with m2 would make a
// cycle through the contraction, so they stay apart. Renames stay views.
sluice.graph @cycle(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                    %w: !sluice.tensor<[k=8, i=8], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  %m1 = sluice.map (%x) {sluice.name = "m1"} : (!sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
  ^bb0(%v: f32):
    %s = arith.mulf %v, %v : f32
    sluice.yield %s : f32
  }
  %r = sluice.rename %m1 {sluice.name = "view"} : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, k=8], f32>
  %c = sluice.contract %r, %w {sluice.name = "mm"} : (!sluice.tensor<[j=4, k=8], f32>, !sluice.tensor<[k=8, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  %m2 = sluice.map (%m1, %c) {sluice.name = "m2"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    sluice.yield %s : f32
  }
  sluice.return %m2 : !sluice.tensor<[j=4, i=8], f32>
}
