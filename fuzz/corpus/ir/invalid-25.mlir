sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=8, k=2], f32> {sluice.name = "b"}) {
  %c = sluice.contract %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8, k=2], f32>)
      -> !sluice.tensor<[j=4], f32>
  sluice.return
}
