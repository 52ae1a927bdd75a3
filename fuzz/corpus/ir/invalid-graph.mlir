sluice.graph @bad(%a: !sluice.tensor<[m=2, k=3], f32> {sluice.name = "a"},
                  %b: !sluice.tensor<[k=3, n=4], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[m=2, q=4], f32> {sluice.name = "c"}) {
  %c = sluice.contract %a, %b : (!sluice.tensor<[m=2, k=3], f32>, !sluice.tensor<[k=3, n=4], f32>) -> !sluice.tensor<[m=2, q=4], f32>
  sluice.return %c : !sluice.tensor<[m=2, q=4], f32>
}
