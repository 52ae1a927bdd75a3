// --sluice-decompose on the LLaMA composites (SluiceDecompositions.cpp,
// docs/Dialect.md): rmsnorm, silu, swiglu, rope. Only primitives remain.
// RUN: sluice-opt %s --sluice-decompose | %strip-origins | FileCheck %s
// RUN: sluice-opt %s --sluice-decompose | %strip-origins | sluice-opt | FileCheck %s
// RUN: sluice-opt %s --sluice-decompose | FileCheck %s --check-prefix=NONE
// NONE-NOT: {{= (sluice\.)?(rmsnorm|silu|swiglu|rope) }}

// CHECK-LABEL: sluice.graph @rmsnorm
// CHECK: %[[SQ:.*]] = map(%x) : (!sluice.tensor<[j=4, i=8], bf16>) -> !sluice.tensor<[j=4, i=8], f32>
// CHECK: arith.mulf %[[A:.*]], %[[A]] : f32
// CHECK: %[[SUM:.*]] = reduce sum %[[SQ]] over ["i"] : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4], f32>
// CHECK: %[[RSTD:.*]] = map(%[[SUM]]) :
// CHECK: arith.constant 8.000000e+00 : f32
// CHECK: math.rsqrt
// CHECK: %[[Y:.*]] = map(%x, %[[RSTD]], %g) {sluice.name = "ln"} : {{.*}} -> !sluice.tensor<[j=4, i=8], bf16>
// CHECK-NEXT: ^bb0(%[[XV:.*]]: f32, %[[RV:.*]]: f32, %[[GV:.*]]: f32):
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[XV]], %[[RV]] : f32
// CHECK-NEXT: %[[U:.*]] = arith.mulf %[[T]], %[[GV]] : f32
// CHECK-NEXT: yield %[[U]] : f32
// CHECK: return %[[Y]], %[[RSTD]]
sluice.graph @rmsnorm(%x: !sluice.tensor<[j=4, i=8], bf16> {sluice.name = "x"},
                      %g: !sluice.tensor<[i=8], bf16> {sluice.name = "g"})
    -> (!sluice.tensor<[j=4, i=8], bf16> {sluice.name = "y"},
        !sluice.tensor<[j=4], f32> {sluice.name = "rstd"}) {
  %y, %r = sluice.rmsnorm %x, %g over ["i"] {sluice.name = "ln"}
      : (!sluice.tensor<[j=4, i=8], bf16>, !sluice.tensor<[i=8], bf16>)
      -> (!sluice.tensor<[j=4, i=8], bf16>, !sluice.tensor<[j=4], f32>)
  sluice.return %y, %r : !sluice.tensor<[j=4, i=8], bf16>, !sluice.tensor<[j=4], f32>
}

// silu(g) * u in one map: x / (1 + exp(-x)), then the product.
// CHECK-LABEL: sluice.graph @swiglu
// CHECK: %[[S:.*]] = map(%a) {sluice.name = "act"}
// CHECK-NEXT: ^bb0(%[[AV:.*]]: f32):
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[AV]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[N]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[E]], %[[ONE]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[AV]], %[[D]] fastmath<arcp> : f32
// CHECK-NEXT: yield %[[Q]] : f32
// CHECK: %[[G:.*]] = map(%[[S]], %b) {sluice.name = "gate"}
// CHECK-NEXT: ^bb0(%[[GV:.*]]: f32, %[[BV:.*]]: f32):
// CHECK: %[[SG:.*]] = arith.divf %[[GV]], %{{.*}} fastmath<arcp> : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[SG]], %[[BV]] : f32
// CHECK-NEXT: yield %[[P]] : f32
sluice.graph @swiglu(%a: !sluice.tensor<[j=4, u=8], f32> {sluice.name = "a"},
                     %b: !sluice.tensor<[j=4, u=8], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, u=8], f32> {sluice.name = "y"}) {
  %s = sluice.silu %a {sluice.name = "act"} : !sluice.tensor<[j=4, u=8], f32>
  %y = sluice.swiglu %s, %b {sluice.name = "gate"} : !sluice.tensor<[j=4, u=8], f32>
  sluice.return %y : !sluice.tensor<[j=4, u=8], f32>
}

// The rotation: the input viewed with its pair dimension renamed (r -> r'),
// broadcast along the output pair r and multiplied by the entry R[r, r'] of
// the 2x2 rotation at angle = j * theta^(-f / F) (F = 3, theta = 500000:
// exp(-ln(500000) / 3 * f)), summed over r' in f32, rounded once to bf16.
// CHECK-LABEL: sluice.graph @rope
// CHECK: %[[V:.*]] = rename %q : !sluice.tensor<[j=4, h=2, r=2, f=3], bf16> -> !sluice.tensor<[j=4, h=2, "r'"=2, f=3], bf16>
// CHECK: %[[T:.*]] = map(%[[V]]) {index_dims = ["r", "r'", "j", "f"]} : (!sluice.tensor<[j=4, h=2, "r'"=2, f=3], bf16>) -> !sluice.tensor<[j=4, h=2, "r'"=2, r=2, f=3], f32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[R:.*]]: index, %[[RP:.*]]: index, %[[J:.*]]: index, %[[F:.*]]: index):
// CHECK: arith.index_cast %[[F]] : index to i64
// CHECK: %[[C:.*]] = arith.constant -4.37412{{[0-9]*}} : f32
// CHECK: arith.index_cast %[[J]] : index to i64
// CHECK: %[[FREQ:.*]] = math.exp
// CHECK: %[[ANGLE:.*]] = arith.mulf %{{.*}}, %[[FREQ]] : f32
// CHECK-NEXT: %[[COS:.*]] = math.cos %[[ANGLE]] : f32
// CHECK-NEXT: %[[SIN:.*]] = math.sin %[[ANGLE]] : f32
// CHECK-NEXT: %[[NSIN:.*]] = arith.negf %[[SIN]] : f32
// CHECK-NEXT: %[[DIAG:.*]] = arith.cmpi eq, %[[R]], %[[RP]] : index
// CHECK-NEXT: %[[UP:.*]] = arith.cmpi ult, %[[R]], %[[RP]] : index
// CHECK-NEXT: %[[OFF:.*]] = arith.select %[[UP]], %[[NSIN]], %[[SIN]] : f32
// CHECK-NEXT: %[[ENTRY:.*]] = arith.select %[[DIAG]], %[[COS]], %[[OFF]] : f32
// CHECK-NEXT: %[[TERM:.*]] = arith.mulf %[[ENTRY]], %[[X]] : f32
// CHECK-NEXT: yield %[[TERM]] : f32
// CHECK: %[[Y:.*]] = reduce sum %[[T]] over ["r'"] {sluice.name = "q_rope"} : !sluice.tensor<[j=4, h=2, "r'"=2, r=2, f=3], f32> -> !sluice.tensor<[j=4, h=2, r=2, f=3], bf16>
// CHECK: return %[[Y]]
sluice.graph @rope(%q: !sluice.tensor<[j=4, h=2, r=2, f=3], bf16> {sluice.name = "q"})
    -> (!sluice.tensor<[j=4, h=2, r=2, f=3], bf16> {sluice.name = "y"}) {
  %y = sluice.rope %q pair "r" freq "f" position "j" {sluice.name = "q_rope", theta = 5.0e5 : f64}
      : !sluice.tensor<[j=4, h=2, r=2, f=3], bf16>
  sluice.return %y : !sluice.tensor<[j=4, h=2, r=2, f=3], bf16>
}
