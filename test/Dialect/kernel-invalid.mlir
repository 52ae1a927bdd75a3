// RUN: sluice-opt %s -split-input-file -verify-diagnostics

sluice.graph @contract_in_fused(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}, %w: !sluice.tensor<[u=2, i=8], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[j=4, u=2], f32> {sluice.name = "y"}) {
  // expected-error @+1 {{of kind 'fused' must not hold a contraction}}
  %k = sluice.kernel (%x, %w) : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=2, i=8], f32>) -> !sluice.tensor<[j=4, u=2], f32> {
  ^bb0(%a: !sluice.tensor<[j=4, i=8], f32>, %b: !sluice.tensor<[u=2, i=8], f32>):
    %c = sluice.contract %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=2, i=8], f32>) -> !sluice.tensor<[j=4, u=2], f32>
    sluice.kernel_yield %c : !sluice.tensor<[j=4, u=2], f32>
  }
  sluice.return %k : !sluice.tensor<[j=4, u=2], f32>
}

// -----

sluice.graph @gemm_without_contraction(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  // expected-error @+1 {{of kind 'gemm' must hold exactly one contraction, got 0}}
  %k = sluice.kernel (%x) {kind = #sluice<kernel_kind gemm>} : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%a: !sluice.tensor<[i=8], f32>):
    sluice.kernel_yield %a : !sluice.tensor<[i=8], f32>
  }
  sluice.return %k : !sluice.tensor<[i=8], f32>
}

// -----

sluice.graph @wrong_yield(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f16> {sluice.name = "y"}) {
  // expected-error @+1 {{yielded types must be the result types}}
  %k = sluice.kernel (%x) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f16> {
  ^bb0(%a: !sluice.tensor<[i=8], f32>):
    sluice.kernel_yield %a : !sluice.tensor<[i=8], f32>
  }
  sluice.return %k : !sluice.tensor<[i=8], f16>
}

// -----

sluice.graph @wrong_args(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  // expected-error @+1 {{body arguments must have the input types}}
  %k = sluice.kernel (%x) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%a: !sluice.tensor<[i=4], f32>):
    %z = sluice.map () : () -> !sluice.tensor<[i=8], f32> {
      %c = arith.constant 0.0 : f32
      sluice.yield %c : f32
    }
    sluice.kernel_yield %z : !sluice.tensor<[i=8], f32>
  }
  sluice.return %k : !sluice.tensor<[i=8], f32>
}

// -----

sluice.graph @bad_packed(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  // expected-error @+1 {{'packed' names result #3 but the kernel has 1 results}}
  %k = sluice.kernel (%x) {packed = array<i64: 3>} : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%a: !sluice.tensor<[i=8], f32>):
    sluice.kernel_yield %a : !sluice.tensor<[i=8], f32>
  }
  sluice.return %k : !sluice.tensor<[i=8], f32>
}

// -----

sluice.graph @composite_in_kernel(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  %k = sluice.kernel (%x) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%a: !sluice.tensor<[i=8], f32>):
    // expected-error @+1 {{is not allowed in a sluice.kernel; only map, reduce, random_mask, relayout, rename and (in a gemm kernel) one contract are}}
    %r = sluice.relu %a : !sluice.tensor<[i=8], f32>
    sluice.kernel_yield %r : !sluice.tensor<[i=8], f32>
  }
  sluice.return %k : !sluice.tensor<[i=8], f32>
}

// -----

sluice.graph @string_epilogue(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}, %w: !sluice.tensor<[u=2, i=8], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[j=4, u=2], f32> {sluice.name = "y"}) {
  // The epilogue is typed: a string is rejected.
  // expected-error @+1 {{attribute 'epilogue' failed to satisfy constraint: what a library contraction applies to its product}}
  %k = sluice.kernel (%x, %w) {kind = #sluice<kernel_kind gemm>, epilogue = "relu"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=2, i=8], f32>) -> !sluice.tensor<[j=4, u=2], f32> {
  ^bb0(%a: !sluice.tensor<[j=4, i=8], f32>, %b: !sluice.tensor<[u=2, i=8], f32>):
    %c = sluice.contract %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=2, i=8], f32>) -> !sluice.tensor<[j=4, u=2], f32>
    sluice.kernel_yield %c : !sluice.tensor<[j=4, u=2], f32>
  }
  sluice.return %k : !sluice.tensor<[j=4, u=2], f32>
}

// -----

sluice.graph @unknown_epilogue(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}, %w: !sluice.tensor<[u=2, i=8], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[j=4, u=2], f32> {sluice.name = "y"}) {
  // expected-error @+2 {{expected ::mlir::sluice::Epilogue to be one of: bias, relu, gelu, bias_relu, bias_gelu, bgrada, bgradb, accumulate}}
  // expected-error @+1 {{failed to parse Sluice_EpilogueAttr parameter 'value'}}
  %k = sluice.kernel (%x, %w) {kind = #sluice<kernel_kind gemm>, epilogue = #sluice<epilogue swish>} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=2, i=8], f32>) -> !sluice.tensor<[j=4, u=2], f32> {
  ^bb0(%a: !sluice.tensor<[j=4, i=8], f32>, %b: !sluice.tensor<[u=2, i=8], f32>):
    %c = sluice.contract %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=2, i=8], f32>) -> !sluice.tensor<[j=4, u=2], f32>
    sluice.kernel_yield %c : !sluice.tensor<[j=4, u=2], f32>
  }
  sluice.return %k : !sluice.tensor<[j=4, u=2], f32>
}

// -----

sluice.graph @accumulate_without_sum(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}, %w: !sluice.tensor<[u=2, i=8], f32> {sluice.name = "w"}, %acc: !sluice.tensor<[j=4, u=2], f32> {sluice.name = "acc"})
    -> (!sluice.tensor<[j=4, u=2], f32> {sluice.name = "y"}) {
  // An accumulating GEMM adds its product to an input with one a + b map.
  // expected-error @+1 {{with epilogue 'accumulate' must add its product to an input of the product's type with one 'sluice.map' (a + b)}}
  %k = sluice.kernel (%x, %w, %acc) {kind = #sluice<kernel_kind gemm>, epilogue = #sluice<epilogue accumulate>} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=2, i=8], f32>, !sluice.tensor<[j=4, u=2], f32>) -> !sluice.tensor<[j=4, u=2], f32> {
  ^bb0(%a: !sluice.tensor<[j=4, i=8], f32>, %b: !sluice.tensor<[u=2, i=8], f32>, %s: !sluice.tensor<[j=4, u=2], f32>):
    %c = sluice.contract %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=2, i=8], f32>) -> !sluice.tensor<[j=4, u=2], f32>
    %m = sluice.map (%s, %c) : (!sluice.tensor<[j=4, u=2], f32>, !sluice.tensor<[j=4, u=2], f32>) -> !sluice.tensor<[j=4, u=2], f32> {
    ^bb0(%l: f32, %r: f32):
      %v = arith.mulf %l, %r : f32
      sluice.yield %v : f32
    }
    sluice.kernel_yield %m : !sluice.tensor<[j=4, u=2], f32>
  }
  sluice.return %k : !sluice.tensor<[j=4, u=2], f32>
}

// -----

sluice.graph @accumulate_yields_product(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}, %w: !sluice.tensor<[u=2, i=8], f32> {sluice.name = "w"}, %acc: !sluice.tensor<[j=4, u=2], f32> {sluice.name = "acc"})
    -> (!sluice.tensor<[j=4, u=2], f32> {sluice.name = "y"}) {
  // expected-error @+1 {{with epilogue 'accumulate' must add its product to an input of the product's type with one 'sluice.map' (a + b)}}
  %k = sluice.kernel (%x, %w, %acc) {kind = #sluice<kernel_kind gemm>, epilogue = #sluice<epilogue accumulate>} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=2, i=8], f32>, !sluice.tensor<[j=4, u=2], f32>) -> !sluice.tensor<[j=4, u=2], f32> {
  ^bb0(%a: !sluice.tensor<[j=4, i=8], f32>, %b: !sluice.tensor<[u=2, i=8], f32>, %s: !sluice.tensor<[j=4, u=2], f32>):
    %c = sluice.contract %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=2, i=8], f32>) -> !sluice.tensor<[j=4, u=2], f32>
    sluice.kernel_yield %c : !sluice.tensor<[j=4, u=2], f32>
  }
  sluice.return %k : !sluice.tensor<[j=4, u=2], f32>
}

// -----

sluice.graph @accumulate_fused(%x: !sluice.tensor<[j=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4], f32> {sluice.name = "y"}) {
  // expected-error @+1 {{with epilogue 'accumulate' must be of kind 'gemm'}}
  %k = sluice.kernel (%x) {epilogue = #sluice<epilogue accumulate>} : (!sluice.tensor<[j=4], f32>) -> !sluice.tensor<[j=4], f32> {
  ^bb0(%a: !sluice.tensor<[j=4], f32>):
    sluice.kernel_yield %a : !sluice.tensor<[j=4], f32>
  }
  sluice.return %k : !sluice.tensor<[j=4], f32>
}
