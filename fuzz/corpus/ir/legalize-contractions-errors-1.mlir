sluice.graph @G(%x: !sluice.tensor<[j=4294967296], f16> {sluice.name = "x"},
                %w: !sluice.tensor<[u=4294967296], f16> {sluice.name = "w"})
    -> (!sluice.tensor<[j=4294967296, u=4294967296], f16> {sluice.name = "y"}) {
  %y = sluice.contract %x, %w
      : (!sluice.tensor<[j=4294967296], f16>, !sluice.tensor<[u=4294967296], f16>)
      -> !sluice.tensor<[j=4294967296, u=4294967296], f16>
  sluice.return %y : !sluice.tensor<[j=4294967296, u=4294967296], f16>
}
