sluice.graph @G(%x: !sluice.tensor<[i=4294967296, j=4294967296], f16> {sluice.name = "x"},
                %w: !sluice.tensor<[i=4294967296], f16> {sluice.name = "w"})
    -> (!sluice.tensor<[j=4294967296], f16> {sluice.name = "y"}) {
  %y = sluice.contract %w, %x
      : (!sluice.tensor<[i=4294967296], f16>, !sluice.tensor<[i=4294967296, j=4294967296], f16>)
      -> !sluice.tensor<[j=4294967296], f16>
  sluice.return %y : !sluice.tensor<[j=4294967296], f16>
}
