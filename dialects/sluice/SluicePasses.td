//===- SluicePasses.td - sluice passes ---------------------*- tablegen -*-===//

#ifndef SLUICE_PASSES_TD
#define SLUICE_PASSES_TD

include "mlir/Pass/PassBase.td"

def SluiceCount : Pass<"sluice-count", "::mlir::ModuleOp"> {
  let summary = "Annotates every op with its class, flop and bytes moved";
  let description = [{
    Runs the data-movement analysis (`dialects/sluice/Analysis/DataMovement.h`) and
    attaches its numbers to every counted op as discardable attributes, and
    the totals to each graph. Fails, naming the op, if a count overflows 64
    bits. The counting rules are in docs/Accounting.md.

    Before:
    ```mlir
    %y = sluice.relu %x : !sluice.tensor<[j=4, i=8], f32>
    ```
    After:
    ```mlir
    %y = sluice.relu %x {sluice.bytes_read = 128 : ui64, sluice.bytes_written = 128 : ui64,
                         sluice.class = "element-wise", sluice.flop = 32 : ui64}
        : !sluice.tensor<[j=4, i=8], f32>
    ```
  }];
}

def SluiceDecompose : Pass<"sluice-decompose", "::mlir::sluice::GraphOp"> {
  let summary = "Replaces composite ops by the primitives they stand for";
  let description = [{
    Every op implementing `CompositeOpInterface` (bias_add, residual_add,
    softmax, layernorm, relu, gelu, gelu_tanh, dropout, causal_mask) is
    replaced by its decomposition into map, reduce, contract, random_mask,
    relayout and rename. Results do not change; the interpreter checks it.

    Before:
    ```mlir
    %y = sluice.relu %x : !sluice.tensor<[i=8], f32>
    ```
    After:
    ```mlir
    %y = sluice.map (%x) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
    ^bb0(%v: f32):
      %zero = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %v, %zero : f32
      sluice.yield %r : f32
    }
    ```
  }];
  let options = [
    Option<"computeType", "compute-type", "::mlir::sluice::ComputeType",
           /*default=*/"::mlir::sluice::ComputeType::f32",
           "The float type map bodies compute in: 'f32' (code generation) or "
           "'f64' (the reference interpreter's derivative checks)",
           [{::llvm::cl::values(
             clEnumValN(::mlir::sluice::ComputeType::f32, "f32", "single precision"),
             clEnumValN(::mlir::sluice::ComputeType::f64, "f64", "double precision"))}]>,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def SluiceAutodiff : Pass<"sluice-autodiff", "::mlir::ModuleOp"> {
  let summary = "Builds forward and backward graphs by reverse-mode autodiff";
  let description = [{
    Decomposes composites into primitives (map bodies in `compute-type`),
    names every primitive after its composite, then replaces each forward
    graph `@G` by two graphs:

    * `@G_forward` (phase forward): the same arguments; the original
      results, then the tensors the backward reads, named `saved.<name>`.
      Boundary inputs the backward reads (`x`, weights) are returned as
      `saved.x` etc. (the same buffer, not a copy).
    * `@G_backward` (phase backward): the saved tensors (same names), then
      one cotangent per original result (`dy` for `y`); one gradient per
      original argument (`d_x` for `x`), in argument order, of the
      argument's type, carrying the argument's `sluice.shape`.

    Every primitive has a vector-Jacobian rule (contract, map by symbolic
    differentiation of its body, reduce sum/max, relayout, rename,
    random_mask). Saved set: exactly the forward tensors the rules read;
    random masks are not saved but recomputed in the backward from the same
    probability and stream, renames (views) are redone on the saved input; a
    map's derivative reads the map's output instead
    of its inputs when that saves fewer tensors. Arguments no result depends
    on get a zero gradient. New ops are named after the forward op
    (`ffn1.grad_lhs`). Details in docs/Autodiff.md.

    Before:
    ```mlir
    sluice.graph @G(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                    %w: !sluice.tensor<[i=8, u=16], f32> {sluice.name = "w"})
        -> (!sluice.tensor<[j=4, u=16], f32> {sluice.name = "y"}) {
      %h = sluice.contract %x, %w {sluice.name = "ffn1"} : (...) -> !sluice.tensor<[j=4, u=16], f32>
      %y = sluice.relu %h {sluice.name = "act"} : !sluice.tensor<[j=4, u=16], f32>
      sluice.return %y : !sluice.tensor<[j=4, u=16], f32>
    }
    ```
    After:
    ```mlir
    sluice.graph @G_forward(%x: ... {sluice.name = "x"}, %w: ... {sluice.name = "w"})
        -> (... {sluice.name = "y"}, ... {sluice.name = "saved.ffn1"},
            ... {sluice.name = "saved.w"}, ... {sluice.name = "saved.x"}) {
      %h = sluice.contract %x, %w {sluice.name = "ffn1"} : ...
      %y = sluice.map (%h) {sluice.name = "act"} : ... { max(h, 0) }
      sluice.return %y, %h, %w, %x : ...
    }
    sluice.graph @G_backward(%0: ... {sluice.name = "saved.ffn1"},
                             %1: ... {sluice.name = "saved.w"},
                             %2: ... {sluice.name = "saved.x"},
                             %dy: ... {sluice.name = "dy"})
        -> (... {sluice.name = "d_x"}, ... {sluice.name = "d_w"})
        attributes {phase = #sluice.phase<backward>} {
      %dh = sluice.map (%0, %dy) {sluice.name = "act.grad0"} : ... { h >= 0 ? dy : 0 }
      %dx = sluice.contract %dh, %1 {sluice.name = "ffn1.grad_lhs"} : ...
      %dw = sluice.contract %2, %dh {sluice.name = "ffn1.grad_rhs"} : ...
      sluice.return %dx, %dw : ...
    }
    ```
  }];
  let options = [
    Option<"computeType", "compute-type", "::mlir::sluice::ComputeType",
           /*default=*/"::mlir::sluice::ComputeType::f32",
           "The float type map bodies compute in: 'f32' or 'f64'",
           [{::llvm::cl::values(
             clEnumValN(::mlir::sluice::ComputeType::f32, "f32", "single precision"),
             clEnumValN(::mlir::sluice::ComputeType::f64, "f64", "double precision"))}]>,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def SluiceStackContractions : Pass<"sluice-stack-contractions", "::mlir::sluice::GraphOp"> {
  let summary = "Stacks contractions of one operand against same-typed weights into one";
  let description = [{
    Contractions at the top level of a graph that read the same tensor
    (looking through `rename`s) against graph arguments of one type, with
    the same scale and the same result layout in the shared tensor's dim
    names (Q, K and V: x against wq, wk, wv), become one contraction over
    the weights stacked along a new dim `s` (`s1`, ... if taken), placed
    just before the weights' free dims in the result. Each former result is
    its slice of the stacked result, renamed back to its own dim names
    where it read a rename. Run before autodiff, the backward's input
    gradient and weight gradient of the group are one contraction each.

    The stack is a `sluice.map` over the weights with index dim `s`
    (`s == 0 ? wq : s == 1 ? wk : wv`), and a slice a map masking the other
    indices to zero followed by a sum over `s` (exact: one term is
    non-zero). Both move bytes of their own until the emitters read slices
    through strides (docs/Layout.md, "Stacked Q/K/V contractions").

    Before:
    ```mlir
    %q = sluice.contract %x, %wq {sluice.name = "q_proj"}
        : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[h=2, p=4, i=8], f32>)
        -> !sluice.tensor<[b=2, j=4, h=2, p=4], f32>
    %xk = sluice.rename %x : !sluice.tensor<[b=2, j=4, i=8], f32> -> !sluice.tensor<[b=2, k=4, i=8], f32>
    %k = sluice.contract %xk, %wk {sluice.name = "k_proj"}
        : (!sluice.tensor<[b=2, k=4, i=8], f32>, !sluice.tensor<[h=2, p=4, i=8], f32>)
        -> !sluice.tensor<[b=2, k=4, h=2, p=4], f32>
    ```
    After (bodies elided):
    ```mlir
    %w = sluice.map (%wq, %wk) {index_dims = ["s"], sluice.name = "q_proj&k_proj.weights"} ...
        -> !sluice.tensor<[s=2, h=2, p=4, i=8], f32>
    %qk = sluice.contract %x, %w {sluice.name = "q_proj&k_proj"}
        : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[s=2, h=2, p=4, i=8], f32>)
        -> !sluice.tensor<[b=2, j=4, s=2, h=2, p=4], f32>
    %m0 = sluice.map (%qk) {index_dims = ["s"], sluice.name = "q_proj.mask"} ...
    %q = sluice.reduce sum %m0 over ["s"] {sluice.name = "q_proj"} ...
    %m1 = sluice.map (%qk) {index_dims = ["s"], sluice.name = "k_proj.mask"} ...
    %k0 = sluice.reduce sum %m1 over ["s"] {sluice.name = "k_proj"} ...
    %k = sluice.rename %k0 {sluice.name = "k_proj.rename"}
        : !sluice.tensor<[b=2, j=4, h=2, p=4], f32> -> !sluice.tensor<[b=2, k=4, h=2, p=4], f32>
    ```
  }];
  let options = [
    Option<"computeType", "compute-type", "::mlir::sluice::ComputeType",
           /*default=*/"::mlir::sluice::ComputeType::f32",
           "The float type the stack's and slices' map bodies compute in: 'f32' or 'f64'",
           [{::llvm::cl::values(
             clEnumValN(::mlir::sluice::ComputeType::f32, "f32", "single precision"),
             clEnumValN(::mlir::sluice::ComputeType::f64, "f64", "double precision"))}]>,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def SluiceStackSliceGradients : Pass<"sluice-stack-slice-gradients", "::mlir::sluice::GraphOp"> {
  let summary = "A sum of slice gradients along one dim becomes one stack of their inputs";
  let description = [{
    The gradient of a slice of a stacked tensor (--sluice-stack-contractions'
    `reduce sum` over `s` of `s == c ? x : 0`) is `s == c ? dx : 0`,
    broadcast along `s`, and autodiff sums the slices' gradients into the
    stacked tensor's gradient one `a + b` map at a time: with three slices,
    three broadcasts and two sums, each a tensor of the stacked size. Where
    a tree of such sums (through `rename`s) has only slice gradients of one
    dim as terms, each index at most once, it becomes one map over their
    inputs with index dim `s`: `s == 0 ? dq : s == 1 ? dk : dv` (an index
    without a term is 0). Exact: every element of the sum had one non-zero
    term. The terms' inputs are renamed to the sum's dim names where a
    `rename` sat between. Other sums are left alone.

    Before (bodies elided):
    ```mlir
    %g1 = sluice.map (%dk) {index_dims = ["s"]} ...   // s == 1 ? dk : 0
    %g2 = sluice.map (%dv) {index_dims = ["s"]} ...   // s == 2 ? dv : 0
    %a = sluice.map (%g1, %g2) ...                    // a + b
    %g0 = sluice.map (%dq) {index_dims = ["s"]} ...   // s == 0 ? dq : 0
    %d = sluice.map (%a, %g0) ...                     // a + b
    ```
    After:
    ```mlir
    %d = sluice.map (%dq, %dk, %dv) {index_dims = ["s"]} ...
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def SluiceLegalizeContractions : Pass<"sluice-legalize-contractions", "::mlir::sluice::GraphOp"> {
  let summary = "Inserts relayouts so that every contraction is one strided-batched GEMM";
  let description = [{
    For every `sluice.contract` at the top level of a graph whose layouts
    have no GEMM mapping (`dialects/sluice/Analysis/GemmMapping.h`: a group of batch,
    free or contracted dimensions is not contiguous, or appears in another
    order, in one of the tensors), relayouts some of the operands to
    `[batch..., free..., contracted...]` (or `[batch..., contracted...,
    free...]` when the operand's innermost dimension is free) and/or
    computes the result as `[batch..., free..., free...]` followed by a
    relayout back to its type. Among the choices that map, it takes the one
    moving the fewest bytes. Inserted ops are named `<contract>.relayout_lhs`
    (`_rhs`, `_result`) and have `sluice.origin_kind = #sluice<origin_kind layout>`; an operand
    relayout is reused by later contractions of the graph that need the same
    one. Contractions that already map, and contractions inside
    `sluice.kernel`s, are not touched. Rules in docs/Codegen.md.

    Before:
    ```mlir
    %s = sluice.contract %q, %k {sluice.name = "qk"}
        : (!sluice.tensor<[b=2, j=4, h=2, p=8], f32>,
           !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
        -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
    ```
    After:
    ```mlir
    %ql = sluice.relayout %q {sluice.name = "qk.relayout_lhs", sluice.origin_kind = #sluice<origin_kind layout>}
        : !sluice.tensor<[b=2, j=4, h=2, p=8], f32> -> !sluice.tensor<[b=2, h=2, j=4, p=8], f32>
    %kl = sluice.relayout %k {sluice.name = "qk.relayout_rhs", sluice.origin_kind = #sluice<origin_kind layout>}
        : !sluice.tensor<[b=2, k=4, h=2, p=8], f32> -> !sluice.tensor<[b=2, h=2, k=4, p=8], f32>
    %s = sluice.contract %ql, %kl {sluice.name = "qk"}
        : (!sluice.tensor<[b=2, h=2, j=4, p=8], f32>,
           !sluice.tensor<[b=2, h=2, k=4, p=8], f32>)
        -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
    ```

    With `streaming`, the contractions the streaming rule of `--sluice-fuse`
    will fuse into a streaming attention kernel keep their layouts: that
    kernel reads and writes its tensors through strides, in any layout, so
    relayouts for it would only move bytes. Before `--sluice-decompose` they
    are predicted from the composites (contract, causal_mask, softmax,
    dropout, contract: `dialects/sluice/Analysis/StreamedContractions.h`);
    after it they are the fusion planner's own streaming groups. A predicted
    chain the rule does not take after all is legalized by the run after the
    decomposition.
  }];
  let options = [
    Option<"streaming", "streaming", "bool", /*default=*/"false",
           "Leave alone the contractions the streaming rule of --sluice-fuse "
           "takes (set it where --sluice-fuse=streaming=true runs)">,
  ];
}

def SluiceFuse : Pass<"sluice-fuse", "::mlir::sluice::GraphOp"> {
  let summary = "Groups primitives into sluice.kernel ops that move the fewest bytes";
  let description = [{
    A greedy algorithm over the dataflow graph and the byte accounting:
    every primitive starts as its own group, and the pass repeatedly merges
    the two groups (a producer and a consumer, or two readers of one tensor)
    whose merge saves the most bytes while the result is still one legal
    kernel, until no merge saves bytes. Then each group becomes a
    `sluice.kernel` (kind `fused`, or `gemm` for a contraction with the
    epilogue folded into it). docs/Fusion.md gives the legality rules and a
    worked example:

    * one iteration space D = outer x R per kernel: every op loops over all
      of D or over the outer dimensions only; every reduction reduces R;
    * no cycle between kernels;
    * a contraction stays a library call; with `fold-epilogues` it absorbs a
      bias along its output rows, then relu or tanh-gelu, or the sum of an
      operand over its contracted dimensions (a bias gradient), as cuBLASLt
      epilogues;
    * with `accumulate-gemms`, a kernel that only sums terms of which all
      but the first are GEMM products becomes those GEMMs, each adding its
      product to the running sum in place (beta = 1, epilogue
      `accumulate`), when that moves fewer bytes;
    * random masks are regenerated inside every kernel that uses them
      (0 bytes); one that must cross a kernel boundary is stored bit-packed
      (`mask-policy=auto`).

    Input: decomposed graphs (no composites). Output: every computing op at
    a graph's top level is a `sluice.kernel`; renames stay as views.
  }];
  let options = [
    Option<"enable", "enable", "bool", /*default=*/"true",
           "Fuse; when false every primitive becomes a kernel of its own "
           "(and masks are stored element-sized), as a framework runs them">,
    Option<"foldEpilogues", "fold-epilogues", "bool", /*default=*/"true",
           "Fold bias, activation and bias-gradient epilogues into "
           "contractions (cuBLASLt)">,
    Option<"maxOps", "max-ops", "unsigned", /*default=*/"0",
           "At most this many primitives per kernel (0: no bound)">,
    Option<"maxResident", "max-resident", "int64_t", /*default=*/"8192",
           "Largest reduced extent (elements) a kernel may keep resident to "
           "reuse a statistic it computed over the same rows">,
    Option<"maskPolicy", "mask-policy", "::mlir::sluice::MaskPolicy",
           /*default=*/"::mlir::sluice::MaskPolicy::Auto",
           "Dropout masks: 'auto' (regenerate where the kernel can, else "
           "bit-pack), 'regenerate' (else store element-sized), 'bitpack' "
           "(always store bit-packed)",
           [{::llvm::cl::values(
             clEnumValN(::mlir::sluice::MaskPolicy::Auto, "auto", "regenerate where the kernel can, else bit-pack"),
             clEnumValN(::mlir::sluice::MaskPolicy::Regenerate, "regenerate", "regenerate, else store element-sized"),
             clEnumValN(::mlir::sluice::MaskPolicy::Bitpack, "bitpack", "always store bit-packed"))}]>,
    Option<"streaming", "streaming", "bool", /*default=*/"false",
           "Fuse each contraction-softmax-contraction chain (and, after "
           "--sluice-recompute-row-statistics, its backward) into one "
           "streaming kernel">,
    Option<"accumulateGemms", "accumulate-gemms", "bool", /*default=*/"false",
           "Fold a kernel that only sums GEMM products into the GEMMs: each "
           "adds its product to the running sum in place (beta = 1), when "
           "that moves fewer bytes">,
  ];
}

def SluiceRecomputeSlices : Pass<"sluice-recompute-slices", "::mlir::ModuleOp"> {
  let summary = "Saves a stacked tensor instead of its slices; the backward cuts them again";
  let description = [{
    On a decomposed forward/backward pair: where the forward saves every
    slice of one stacked tensor (a `reduce sum` over `s` of a map keeping
    one index of `s`, as --sluice-stack-contractions cuts Q, K and V from
    one stacked projection; the tensor itself or one rename of it) and the
    backward only contracts them (the streaming backward's operands), the
    forward saves the stacked tensor instead (the same bytes) and the
    backward cuts each slice again from it, each through a rename of its
    own where the forward's did. The slices are then reads that
    --sluice-fuse{streaming=true} takes into the streaming kernels of both
    graphs, which read Q, K and V from the stacked tensor through strides
    (docs/Layout.md, "Stacked Q/K/V contractions"). Records the graphs'
    framework baselines first, like --sluice-recompute-row-statistics.

    Before (backward):
    ```mlir
    %s = sluice.contract %saved_q, %saved_k ...
    ```
    After:
    ```mlir
    %kv = sluice.rename %saved_qkv ...
    %mq = sluice.map (%saved_qkv) {index_dims = ["s"]} ...   // s == 0 ? x : 0
    %q  = sluice.reduce sum %mq over ["s"] ...
    %mk = sluice.map (%kv) {index_dims = ["s"]} ...          // s == 1 ? x : 0
    %k  = sluice.reduce sum %mk over ["s"] ...
    %s  = sluice.contract %q, %k ...
    ```
  }];
}

def SluiceRecomputeRowStatistics
    : Pass<"sluice-recompute-row-statistics", "::mlir::ModuleOp"> {
  let summary = "Saves a softmax's log-sum-exp instead of its probabilities; "
                "the backward recomputes them";
  let description = [{
    On a decomposed forward/backward pair: for each chain
    `contract -> score maps -> softmax -> [dropout] -> contract` of the
    forward (docs/Fusion.md, "Streaming kernels") whose probabilities the
    forward saves, the forward computes and saves the row statistic
    `lse = max + log(sum)` instead; the backward recomputes the
    probabilities from the saved contraction operands and `lse`
    (`p = exp(s - lse)`; the dropout mask is redrawn from its stream), and
    the softmax gradient's row term `rowsum(p * dp)` becomes
    `rowsum(do * o)` (equal, with or without dropout), so that no tensor
    of the scores' size is saved. `sluice-fuse{streaming=true}` then makes
    each side one streaming kernel.

    Before (backward):
    ```mlir
    %dot = sluice.map (%saved_p, %dp) ... { a * b }
    %row = sluice.reduce sum %dot over ["k"] ...
    ```
    After:
    ```mlir
    %s   = sluice.contract %saved_q, %saved_k {scale = ...}
    %p   = sluice.map (%s, %saved_lse) ... { exp(a - b) }
    %dot = sluice.map (%do, %saved_o) ... { a * b }
    %row = sluice.reduce sum %dot over ["p"] ...
    ```
    The module's `sluice.baseline` (the framework baseline of every
    graph, docs/Accounting.md) is recorded before the rewrite, since a
    framework saves the probabilities.
  }];
}

#endif // SLUICE_PASSES_TD
