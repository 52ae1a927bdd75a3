// RUN: sluice-opt --sluice-autodiff -split-input-file -verify-diagnostics %s

sluice.graph @G(%x: !sluice.tensor<[i=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=4], f32> {sluice.name = "y"}) {
  %y = sluice.map (%x) : (!sluice.tensor<[i=4], f32>) -> !sluice.tensor<[i=4], f32> {
  ^bb0(%a: f32):
    // expected-error @below {{'math.sin' op cannot be differentiated: no derivative rule}}
    %s = math.sin %a : f32
    sluice.yield %s : f32
  }
  sluice.return %y : !sluice.tensor<[i=4], f32>
}

// -----

sluice.graph @G(%x: !sluice.tensor<[i=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=4], f32> {sluice.name = "y"}) {
  %y = sluice.map (%x) : (!sluice.tensor<[i=4], f32>) -> !sluice.tensor<[i=4], f32> {
  ^bb0(%a: f32):
    // expected-error @below {{'math.powf' op cannot be differentiated: only a constant exponent is supported}}
    %s = math.powf %a, %a : f32
    sluice.yield %s : f32
  }
  sluice.return %y : !sluice.tensor<[i=4], f32>
}

// -----

// expected-error @below {{'sluice.graph' op cannot be differentiated: symbol @G_backward already exists}}
sluice.graph @G(%x: !sluice.tensor<[i=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=4], f32> {sluice.name = "y"}) {
  sluice.return %x : !sluice.tensor<[i=4], f32>
}
sluice.graph @G_backward(%x: !sluice.tensor<[i=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=4], f32> {sluice.name = "y"}) attributes {phase = #sluice<phase backward>} {
  sluice.return %x : !sluice.tensor<[i=4], f32>
}
