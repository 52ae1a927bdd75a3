// One case per verifier diagnostic of rmsnorm, swiglu and rope.
// RUN: sluice-opt %s -split-input-file -verify-diagnostics

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[i=8], f32> {sluice.name = "s"}) {
  // expected-error @+1 {{'sluice.rmsnorm' op 'dims' names dimension 'u' that the input lacks}}
  %y:2 = sluice.rmsnorm %x, %s over ["u"]
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[i=4], f32> {sluice.name = "s"}) {
  // expected-error @+1 {{'sluice.rmsnorm' op dimension 'i' has size 4 in the scale but 8 in the normalized dimensions}}
  %y:2 = sluice.rmsnorm %x, %s over ["i"]
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=4], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[i=8], f32> {sluice.name = "s"}) {
  // expected-error @+1 {{'sluice.rmsnorm' op rstd has dimension 'i' that the input without the reduced dimensions lacks}}
  %y:2 = sluice.rmsnorm %x, %s over ["i"]
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>)
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[i=8], f32> {sluice.name = "s"}) {
  // expected-error @+1 {{'sluice.rmsnorm' op eps must be positive, got 0}}
  %y:2 = sluice.rmsnorm %x, %s over ["i"] {eps = 0.0 : f64}
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %u: !sluice.tensor<[j=4, i=8], f16> {sluice.name = "u"}) {
  // expected-error @+1 {{'sluice.swiglu' op requires the same type for all operands and results}}
  %y = "sluice.swiglu"(%x, %u)
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f16>) -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return
}

// -----

sluice.graph @g(%q: !sluice.tensor<[j=4, r=2, f=3], f32> {sluice.name = "q"}) {
  // expected-error @+1 {{'sluice.rope' op dimension 'k' is not a dimension of the input}}
  %y = sluice.rope %q pair "r" freq "f" position "k" : !sluice.tensor<[j=4, r=2, f=3], f32>
  sluice.return
}

// -----

sluice.graph @g(%q: !sluice.tensor<[j=4, r=2, f=3], f32> {sluice.name = "q"}) {
  // expected-error @+1 {{'sluice.rope' op pair, freq and position must be three different dimensions}}
  %y = sluice.rope %q pair "r" freq "f" position "f" : !sluice.tensor<[j=4, r=2, f=3], f32>
  sluice.return
}

// -----

sluice.graph @g(%q: !sluice.tensor<[j=4, r=3, f=3], f32> {sluice.name = "q"}) {
  // expected-error @+1 {{'sluice.rope' op pair dimension 'r' must have size 2, got 3}}
  %y = sluice.rope %q pair "r" freq "f" position "j" : !sluice.tensor<[j=4, r=3, f=3], f32>
  sluice.return
}

// -----

sluice.graph @g(%q: !sluice.tensor<[j=4, r=2, f=3], f32> {sluice.name = "q"}) {
  // expected-error @+1 {{'sluice.rope' op theta must be positive and finite, got -1}}
  %y = sluice.rope %q pair "r" freq "f" position "j" {theta = -1.0 : f64} : !sluice.tensor<[j=4, r=2, f=3], f32>
  sluice.return
}
