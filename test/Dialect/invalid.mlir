// Every diagnostic of the sluice ops' verifiers and custom parsers
// (SluiceOps.cpp), and structural errors that must be diagnostics, not
// crashes.
// RUN: sluice-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// graph
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'sluice.graph' op argument #1 has no 'sluice.name' string attribute}}
sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=4], f32>) {
  sluice.return
}

// -----

// expected-error @+1 {{'sluice.graph' op argument #0 has no 'sluice.name' string attribute}}
sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = 3 : i64}) {
  sluice.return
}

// -----

// expected-error @+1 {{'sluice.graph' op result #0 has no 'sluice.name' string attribute}}
sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "a"})
    -> !sluice.tensor<[i=4], f32> {
  sluice.return %a : !sluice.tensor<[i=4], f32>
}

// -----

// expected-error @+1 {{'sluice.graph' op boundary name 'x' is used more than once}}
sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "x"},
                %b: !sluice.tensor<[i=4], f32> {sluice.name = "x"}) {
  sluice.return
}

// -----

// Arguments and results share one namespace.
// expected-error @+1 {{'sluice.graph' op boundary name 'x' is used more than once}}
sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=4], f32> {sluice.name = "x"}) {
  sluice.return %a : !sluice.tensor<[i=4], f32>
}

// -----

// expected-error @+1 {{'sluice.graph' op argument 'a' must be a !sluice.tensor, got 'f32'}}
sluice.graph @g(%a: f32 {sluice.name = "a"}) {
  sluice.return
}

// -----

// expected-error @+1 {{'sluice.graph' op result 'y' must be a !sluice.tensor, got 'f32'}}
sluice.graph @g() -> (f32 {sluice.name = "y"}) {
  sluice.return
}

// -----

// expected-error @+1 {{'sluice.graph' op body must end in 'sluice.return'}}
sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "a"}) {
  %r = sluice.relu %a : !sluice.tensor<[i=4], f32>
}

// -----

// expected-error @+1 {{'sluice.graph' op body must end in 'sluice.return'}}
"sluice.graph"() <{function_type = () -> (), sym_name = "g"}> ({
^bb0:
}) : () -> ()

// -----

// A graph needs a body.
// expected-error @+1 {{'sluice.graph' op region #0 ('body') failed to verify constraint: region with 1 blocks}}
sluice.graph @g()

// -----

// expected-error @+1 {{entry block must have 1 arguments to match function signature}}
"sluice.graph"() <{function_type = (!sluice.tensor<[i=4], f32>) -> (),
                   arg_attrs = [{sluice.name = "a"}], sym_name = "g"}> ({
^bb0:
  "sluice.return"() : () -> ()
}) : () -> ()

// -----

// expected-error @+1 {{type of entry block argument #0('!sluice.tensor<[i=8], f32>') must match the type of the corresponding argument in function signature('!sluice.tensor<[i=4], f32>')}}
"sluice.graph"() <{function_type = (!sluice.tensor<[i=4], f32>) -> (),
                   arg_attrs = [{sluice.name = "a"}], sym_name = "g"}> ({
^bb0(%a: !sluice.tensor<[i=8], f32>):
  "sluice.return"() : () -> ()
}) : () -> ()

// -----

// expected-error @+1 {{'phase' must be #sluice<phase forward> or #sluice<phase backward>, got "sideways"}}
sluice.graph @g() attributes {phase = "sideways"} {
  sluice.return
}

//===----------------------------------------------------------------------===//
// return
//===----------------------------------------------------------------------===//

// -----

sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "a"})
    -> (!sluice.tensor<[i=4], f32> {sluice.name = "y"}) {
  // expected-error @+1 {{'sluice.return' op returns 0 values but the graph has 1 results}}
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "a"})
    -> (!sluice.tensor<[i=4], f16> {sluice.name = "y"}) {
  // expected-error @+1 {{'sluice.return' op operand #0 has type '!sluice.tensor<[i=4], f32>' but graph result 'y' has type '!sluice.tensor<[i=4], f16>'}}
  sluice.return %a : !sluice.tensor<[i=4], f32>
}

// -----

// The layout is part of the type.
sluice.graph @g(%a: !sluice.tensor<[j=2, i=4], f32> {sluice.name = "a"})
    -> (!sluice.tensor<[i=4, j=2], f32> {sluice.name = "y"}) {
  // expected-error @+1 {{'sluice.return' op operand #0 has type '!sluice.tensor<[j=2, i=4], f32>' but graph result 'y' has type '!sluice.tensor<[i=4, j=2], f32>'}}
  sluice.return %a : !sluice.tensor<[j=2, i=4], f32>
}

// -----

// expected-error @+1 {{'sluice.return' op expects parent op 'sluice.graph'}}
sluice.return

//===----------------------------------------------------------------------===//
// yield
//===----------------------------------------------------------------------===//

// -----

sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "a"}) {
  %c = arith.constant 1.0 : f32
  // expected-error @+1 {{'sluice.yield' op expects parent op 'sluice.map'}}
  sluice.yield %c : f32
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "a"})
    -> (!sluice.tensor<[i=4], f32> {sluice.name = "y"}) {
  %m = sluice.map () {index_dims = ["i"]} : () -> !sluice.tensor<[i=4], f32> {
  ^bb0(%i: index):
    // expected-error @+1 {{invalid kind of type specified}}
    sluice.yield %i : index
  }
  sluice.return %m : !sluice.tensor<[i=4], f32>
}

//===----------------------------------------------------------------------===//
// contract
//===----------------------------------------------------------------------===//

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=8, k=2], f16> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.contract' op lhs has element type 'f32' but rhs has 'f16'}}
  %c = sluice.contract %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8, k=2], f16>)
      -> !sluice.tensor<[j=4, k=2], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=8, k=2], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.contract' op lhs has element type 'f32' but result has 'bf16'}}
  %c = sluice.contract %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8, k=2], f32>)
      -> !sluice.tensor<[j=4, k=2], bf16>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=6, k=2], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.contract' op dimension 'i' has size 8 in the lhs but 6 in the rhs}}
  %c = sluice.contract %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=6, k=2], f32>)
      -> !sluice.tensor<[j=4, k=2], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=8, k=2], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.contract' op result dimension 'h' appears in no operand}}
  %c = sluice.contract %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8, k=2], f32>)
      -> !sluice.tensor<[j=4, k=2, h=3], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=8, k=2], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.contract' op dimension 'k' has size 3 in the result but 2 in the operands}}
  %c = sluice.contract %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8, k=2], f32>)
      -> !sluice.tensor<[j=4, k=3], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=8, k=2], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.contract' op lhs dimension 'j' appears in neither the other operand nor the result}}
  %c = sluice.contract %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8, k=2], f32>)
      -> !sluice.tensor<[k=2], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=8, k=2], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.contract' op rhs dimension 'k' appears in neither the other operand nor the result}}
  %c = sluice.contract %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8, k=2], f32>)
      -> !sluice.tensor<[j=4], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=8, k=2], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.contract' op attribute 'scale' failed to satisfy constraint: 64-bit float attribute}}
  %c = sluice.contract %a, %b {scale = 2.0 : f32}
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8, k=2], f32>)
      -> !sluice.tensor<[j=4, k=2], f32>
  sluice.return
}

//===----------------------------------------------------------------------===//
// map
//===----------------------------------------------------------------------===//

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.map' op input #0 has dimension 'j' that the result lacks}}
  %m = sluice.map (%a) : (!sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32):
    sluice.yield %v : f32
  }
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=4], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.map' op dimension 'i' has size 4 in the input #1 but 8 in the result}}
  %m = sluice.map (%a, %b) : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=4], f32>)
      -> !sluice.tensor<[j=4, i=8], f32> {
  ^bb0(%v: f32, %w: f32):
    sluice.yield %v : f32
  }
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.map' op 'index_dims' names dimension 'j' that the result lacks}}
  %m = sluice.map (%a) {index_dims = ["j"]} : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32, %j: index):
    sluice.yield %v : f32
  }
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.map' op 'index_dims' names dimension 'i' twice}}
  %m = sluice.map (%a) {index_dims = ["i", "i"]} : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32, %i: index, %i2: index):
    sluice.yield %v : f32
  }
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.map' op body must take 1 float arguments and 1 index arguments, got 1 arguments}}
  %m = sluice.map (%a) {index_dims = ["i"]} : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32):
    sluice.yield %v : f32
  }
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.map' op body must take 1 float arguments and 0 index arguments, got 2 arguments}}
  %m = sluice.map (%a) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32, %w: f32):
    sluice.yield %v : f32
  }
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.map' op body argument #0 must be a float, got 'index'}}
  %m = sluice.map (%a) {index_dims = ["i"]} : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%i: index, %v: f32):
    sluice.yield %v : f32
  }
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.map' op body argument #1 must be index, got 'i64'}}
  %m = sluice.map (%a) {index_dims = ["i"]} : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32, %i: i64):
    sluice.yield %v : f32
  }
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  %m = sluice.map (%a) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'sluice.relu' op is not allowed in a sluice.map body; only arith and math ops are}}
    %r = sluice.relu %a : !sluice.tensor<[i=8], f32>
    sluice.yield %v : f32
  }
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  %m = sluice.map (%a) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'builtin.unrealized_conversion_cast' op is not allowed in a sluice.map body; only arith and math ops are}}
    %r = builtin.unrealized_conversion_cast %v : f32 to f32
    sluice.yield %r : f32
  }
  sluice.return
}

// -----

// A body without a terminator.
sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.map' op body must end in 'sluice.yield'}}
  %m = sluice.map (%a) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32):
    %r = arith.negf %v : f32
  }
  sluice.return
}

// -----

// An empty block.
sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.map' op expects a non-empty block}}
  %m = sluice.map (%a) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32):
  }
  sluice.return
}

// -----

// An empty region.
sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.map' op expects a non-empty block}}
  %m = sluice.map (%a) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  }
  sluice.return
}

// -----

// Two blocks.
sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.map' op expects region #0 to have 0 or 1 blocks}}
  %m = sluice.map (%a) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32):
    sluice.yield %v : f32
  ^bb1(%w: f32):
    sluice.yield %w : f32
  }
  sluice.return
}

//===----------------------------------------------------------------------===//
// reduce
//===----------------------------------------------------------------------===//

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.reduce' op 'dims' must name at least one dimension}}
  %r = sluice.reduce sum %a over [] : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.reduce' op 'dims' names dimension 'i' twice}}
  %r = sluice.reduce sum %a over ["i", "i"] : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.reduce' op 'dims' names dimension 'k' that the input lacks}}
  %r = sluice.reduce max %a over ["k"] : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.reduce' op result has dimension 'i' that the input without the reduced dimensions lacks}}
  %r = sluice.reduce max %a over ["i"] : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.reduce' op input without the reduced dimensions has dimension 'j' that the result lacks}}
  %r = sluice.reduce max %a over ["i"] : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.reduce' op dimension 'j' has size 2 in the result but 4 in the input without the reduced dimensions}}
  %r = sluice.reduce max %a over ["i"] : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=2], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{expected reduce kind 'sum' or 'max', got 'min'}}
  %r = sluice.reduce min %a over ["i"] : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4], f32>
  sluice.return
}

//===----------------------------------------------------------------------===//
// random_mask
//===----------------------------------------------------------------------===//

// -----

sluice.graph @g() {
  // expected-error @+1 {{'sluice.random_mask' op probability must be in [0, 1), got 1.000000e+00}}
  %m = sluice.random_mask {probability = 1.0 : f64, stream = 0 : i64} : !sluice.tensor<[i=8], f32>
  sluice.return
}

// -----

sluice.graph @g() {
  // expected-error @+1 {{'sluice.random_mask' op probability must be in [0, 1), got -5.000000e-01}}
  %m = sluice.random_mask {probability = -0.5 : f64, stream = 0 : i64} : !sluice.tensor<[i=8], f32>
  sluice.return
}

// -----

sluice.graph @g() {
  // expected-error @+1 {{'sluice.random_mask' op probability must be in [0, 1), got nan}}
  %m = sluice.random_mask {probability = 0x7FF8000000000000 : f64, stream = 0 : i64} : !sluice.tensor<[i=8], f32>
  sluice.return
}

// -----

sluice.graph @g() {
  // expected-error @+1 {{'sluice.random_mask' op requires attribute 'stream'}}
  %m = sluice.random_mask {probability = 0.5 : f64} : !sluice.tensor<[i=8], f32>
  sluice.return
}

//===----------------------------------------------------------------------===//
// relayout
//===----------------------------------------------------------------------===//

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.relayout' op input has element type 'f32' but result has 'f16'}}
  %r = sluice.relayout %a : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8, j=4], f16>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.relayout' op result has dimension 'k' that the input lacks}}
  %r = sluice.relayout %a : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8, k=4], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.relayout' op input has dimension 'j' that the result lacks}}
  %r = sluice.relayout %a : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.relayout' op dimension 'j' has size 2 in the result but 4 in the input}}
  %r = sluice.relayout %a : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8, j=2], f32>
  sluice.return
}

//===----------------------------------------------------------------------===//
// rename
//===----------------------------------------------------------------------===//

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.rename' op input has element type 'f32' but result has 'bf16'}}
  %r = sluice.rename %a : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[k=4, i=8], bf16>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.rename' op result has rank 3 but the input has rank 2}}
  %r = sluice.rename %a : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[k=4, i=8, h=1], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.rename' op result dimension 'i' (#0) has size 8 but input dimension 'j' has size 4}}
  %r = sluice.rename %a : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8, j=4], f32>
  sluice.return
}

//===----------------------------------------------------------------------===//
// bias_add
//===----------------------------------------------------------------------===//

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[k=8], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.bias_add' op bias has dimension 'k' that the input lacks}}
  %r = sluice.bias_add %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[k=8], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=4], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.bias_add' op dimension 'i' has size 4 in the bias but 8 in the input}}
  %r = sluice.bias_add %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=4], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.bias_add' op input has element type 'f32' but result has 'f16'}}
  %r = sluice.bias_add %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[j=4, i=8], f16>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.bias_add' op input has dimension 'j' that the result lacks}}
  %r = sluice.bias_add %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32>
  sluice.return
}

//===----------------------------------------------------------------------===//
// residual_add
//===----------------------------------------------------------------------===//

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.residual_add' op lhs has dimension 'j' that the rhs lacks}}
  %r = sluice.residual_add %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=8, j=2], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.residual_add' op dimension 'j' has size 2 in the rhs but 4 in the lhs}}
  %r = sluice.residual_add %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8, j=2], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f16> {sluice.name = "a"},
                %b: !sluice.tensor<[i=8, j=4], f16> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.residual_add' op lhs has element type 'f16' but result has 'f32'}}
  %r = sluice.residual_add %a, %b : (!sluice.tensor<[j=4, i=8], f16>, !sluice.tensor<[i=8, j=4], f16>) -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.residual_add' op dimension 'i' has size 4 in the result but 8 in the lhs}}
  %r = sluice.residual_add %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=4], f32>
  sluice.return
}

//===----------------------------------------------------------------------===//
// softmax
//===----------------------------------------------------------------------===//

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, k=4], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.softmax' op softmax dimension 'i' is not a dimension of the input}}
  %r = sluice.softmax %a over "i" : !sluice.tensor<[j=4, k=4], f32>
  sluice.return
}

// -----

sluice.graph @g(%a: !sluice.tensor<[j=4, k=4], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.softmax' op requires the same type for all operands and results}}
  %r = "sluice.softmax"(%a) <{dim = "k"}> : (!sluice.tensor<[j=4, k=4], f32>) -> !sluice.tensor<[k=4, j=4], f32>
  sluice.return
}

//===----------------------------------------------------------------------===//
// layernorm
//===----------------------------------------------------------------------===//

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[i=8], f32> {sluice.name = "s"}) {
  // expected-error @+1 {{'sluice.layernorm' op 'dims' must name at least one dimension}}
  %y:3 = sluice.layernorm %x, %s, %s over []
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>)
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[i=8], f32> {sluice.name = "s"}) {
  // expected-error @+1 {{'sluice.layernorm' op 'dims' names dimension 'u' that the input lacks}}
  %y:3 = sluice.layernorm %x, %s, %s over ["u"]
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[i=8], f32> {sluice.name = "s"}) {
  // expected-error @+1 {{'sluice.layernorm' op 'dims' names dimension 'i' twice}}
  %y:3 = sluice.layernorm %x, %s, %s over ["i", "i"]
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "s"},
                %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.layernorm' op scale has dimension 'j' that the normalized dimensions lacks}}
  %y:3 = sluice.layernorm %x, %s, %b over ["i"]
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[i=8], f32> {sluice.name = "s"},
                %b: !sluice.tensor<[i=4], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.layernorm' op dimension 'i' has size 4 in the bias but 8 in the normalized dimensions}}
  %y:3 = sluice.layernorm %x, %s, %b over ["i"]
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=4], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[], f32> {sluice.name = "s"},
                %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.layernorm' op normalized dimensions has dimension 'i' that the scale lacks}}
  %y:3 = sluice.layernorm %x, %s, %b over ["i"]
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[i=8], f32> {sluice.name = "s"}) {
  // expected-error @+1 {{'sluice.layernorm' op input has dimension 'j' that the result lacks}}
  %y:3 = sluice.layernorm %x, %s, %s over ["i"]
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[i=8], f32> {sluice.name = "s"}) {
  // expected-error @+1 {{'sluice.layernorm' op mean has dimension 'i' that the input without the reduced dimensions lacks}}
  %y:3 = sluice.layernorm %x, %s, %s over ["i"]
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[i=8], f32> {sluice.name = "s"}) {
  // expected-error @+1 {{'sluice.layernorm' op input without the reduced dimensions has dimension 'j' that the rstd lacks}}
  %y:3 = sluice.layernorm %x, %s, %s over ["i"]
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[], f32>)
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[i=8], f32> {sluice.name = "s"}) {
  // expected-error @+1 {{'sluice.layernorm' op eps must be positive, got 0.000000e+00}}
  %y:3 = sluice.layernorm %x, %s, %s over ["i"] {eps = 0.0 : f64}
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[i=8], f32> {sluice.name = "s"}) {
  // expected-error @+1 {{'sluice.layernorm' op eps must be positive, got -1.000000e-05}}
  %y:3 = sluice.layernorm %x, %s, %s over ["i"] {eps = -1.0e-5 : f64}
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}

//===----------------------------------------------------------------------===//
// dropout
//===----------------------------------------------------------------------===//

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}) {
  // expected-error @+1 {{'sluice.dropout' op result type '!sluice.tensor<[i=8, j=4], f32>' must equal the input type '!sluice.tensor<[j=4, i=8], f32>'}}
  %y:2 = sluice.dropout %x {probability = 0.1 : f64, stream = 0 : i64}
      : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8, j=4], f32>, !sluice.tensor<[j=4, i=8], f32>
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}) {
  // expected-error @+1 {{'sluice.dropout' op mask has dimension 'k' that the input lacks}}
  %y:2 = sluice.dropout %x {probability = 0.1 : f64, stream = 0 : i64}
      : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[k=4, i=8], f32>
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}) {
  // expected-error @+1 {{'sluice.dropout' op probability must be in [0, 1), got 1.500000e+00}}
  %y:2 = sluice.dropout %x {probability = 1.5 : f64, stream = 0 : i64}
      : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>
  sluice.return
}

//===----------------------------------------------------------------------===//
// causal_mask
//===----------------------------------------------------------------------===//

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, k=4], f32> {sluice.name = "x"}) {
  // expected-error @+1 {{'sluice.causal_mask' op dimension 'q' is not a dimension of the input}}
  %y = sluice.causal_mask %x query "q" key "k" : !sluice.tensor<[j=4, k=4], f32>
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, k=4], f32> {sluice.name = "x"}) {
  // expected-error @+1 {{'sluice.causal_mask' op dimension 'kk' is not a dimension of the input}}
  %y = sluice.causal_mask %x query "j" key "kk" : !sluice.tensor<[j=4, k=4], f32>
  sluice.return
}

// -----

sluice.graph @g(%x: !sluice.tensor<[j=4, k=4], f32> {sluice.name = "x"}) {
  // expected-error @+1 {{'sluice.causal_mask' op query and key must be different dimensions}}
  %y = sluice.causal_mask %x query "j" key "j" : !sluice.tensor<[j=4, k=4], f32>
  sluice.return
}

//===----------------------------------------------------------------------===//
// Operand types
//===----------------------------------------------------------------------===//

// -----

sluice.graph @g() {
  %c = arith.constant 1.0 : f32
  // expected-error @+1 {{'sluice.relu' op operand #0 must be sluice tensor, but got 'f32'}}
  %y = "sluice.relu"(%c) : (f32) -> f32
  sluice.return
}

// -----

sluice.graph @bias_add_bias_element_type(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                                         %b: !sluice.tensor<[i=8], f16> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  // expected-error @+1 {{'sluice.bias_add' op bias has element type 'f16' but input has 'f32'}}
  %y = sluice.bias_add %x, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f16>) -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}

// -----

sluice.graph @residual_add_rhs_element_type(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                                            %b: !sluice.tensor<[j=4, i=8], bf16> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  // expected-error @+1 {{'sluice.residual_add' op rhs has element type 'bf16' but lhs has 'f32'}}
  %y = sluice.residual_add %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], bf16>) -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}

// -----

sluice.graph @dropout_mask_element_type(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  // expected-error @+1 {{'sluice.dropout' op mask has element type 'f16' but input has 'f32'}}
  %y, %m = sluice.dropout %x {probability = 0.5 : f64, stream = 0 : i64} : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f16>
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}
