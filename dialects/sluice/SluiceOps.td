//===- SluiceOps.td - sluice operations --------------------*- tablegen -*-===//
//
// Primitives: contract, map, reduce, random_mask, relayout, rename.
// Composites (decomposed by CompositeOpInterface): bias_add, residual_add,
// softmax, layernorm, rmsnorm, relu, gelu, gelu_tanh, silu, swiglu, dropout,
// causal_mask, rope.
// Structure: graph, return, yield.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_OPS_TD
#define SLUICE_OPS_TD

include "dialects/sluice/SluiceDialect.td"
include "dialects/sluice/SluiceAttrs.td"
include "dialects/sluice/SluiceTypes.td"
include "dialects/sluice/SluiceInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

def Sluice_GraphOp : Sluice_Op<"graph", [
    FunctionOpInterface, IsolatedFromAbove, OpAsmOpInterface]> {
  let summary = "A dataflow graph with named boundary tensors";
  let description = [{
    A function-like op holding one block of sluice ops. Every argument and
    result carries a unique `sluice.name` (its canonical boundary name, e.g.
    `x`, `wq`, `y`, `d_wq`); `sluice.shape` optionally gives the boundary
    tensor's logical (PyTorch) shape when its named dimensions refine it.
    `phase` says whether the graph is a forward or a backward entry point.

    ```mlir
    sluice.graph @layer(%x: !sluice.tensor<[b=2, j=4, i=8], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[b=2, j=4, i=8], f32> {sluice.name = "y"}) {
      %y = sluice.relu %x : !sluice.tensor<[b=2, j=4, i=8], f32>
      sluice.return %y : !sluice.tensor<[b=2, j=4, i=8], f32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       DefaultValuedAttr<Sluice_PhaseAttr, "Phase::forward">:$phase);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
      "::llvm::ArrayRef<::llvm::StringRef>":$argNames, "::mlir::TypeRange":$argTypes,
      "::llvm::ArrayRef<::llvm::StringRef>":$resultNames, "::mlir::TypeRange":$resultTypes,
      CArg<"Phase", "Phase::forward">:$phase)>];
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() { return getFunctionType().getInputs(); }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() { return getFunctionType().getResults(); }
    bool isDeclaration() { return false; }
    static ::llvm::StringRef getDefaultDialect() { return "sluice"; }
    void getAsmBlockArgumentNames(::mlir::Region &region,
                                  ::mlir::OpAsmSetValueNameFn setNameFn);

    /// The canonical name of argument `index` (empty if missing).
    ::llvm::StringRef getArgName(unsigned index);
    /// The canonical name of result `index` (empty if missing).
    ::llvm::StringRef getResultName(unsigned index);
    /// Whether argument `index` is a tensor the forward graph saved
    /// (`sluice.saved`).
    bool isSavedArg(unsigned index);
    /// Whether result `index` is a tensor saved for the backward graph.
    bool isSavedResult(unsigned index);
    /// The forward value a saved argument/result holds (its `sluice.saved`),
    /// empty if it is not saved.
    ::llvm::StringRef getSavedArgSource(unsigned index);
    ::llvm::StringRef getSavedResultSource(unsigned index);
    /// The argument named `name`, or a null value.
    ::mlir::BlockArgument lookupArgument(::llvm::StringRef name);
    /// The terminator.
    ReturnOp getReturnOp();
  }];
}

def Sluice_ReturnOp : Sluice_Op<"return", [
    Pure, HasParent<"GraphOp">, ReturnLike, Terminator]> {
  let summary = "Returns a graph's results";
  let arguments = (ins Variadic<Sluice_Tensor>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let hasVerifier = 1;
}

def Sluice_YieldOp : Sluice_Op<"yield", [
    Pure, HasParent<"MapOp">, ReturnLike, Terminator]> {
  let summary = "Yields the scalar result of a map body";
  let arguments = (ins AnyFloat:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def Sluice_KernelOp : Sluice_Op<"kernel", [
    IsolatedFromAbove, SingleBlock, Pure]> {
  let summary = "A group of primitives that runs as one kernel";
  let description = [{
    Made by `--sluice-fuse`. The body computes the kernel's results from its
    inputs (bound to the block arguments, in order) with primitives; only the
    inputs are read from memory and only the results are written, so a value
    that stays inside the body costs no bytes.

    * `kind = fused`: a generated kernel holding maps, reductions, random
      masks and relayouts over one iteration space (docs/Fusion.md gives the
      legality rules).
    * `kind = gemm`: one `sluice.contract` run by the BLAS library, plus the
      epilogue ops folded into the library call (`epilogue`, an
      `#sluice<epilogue ...>`, names it: `bias`, `relu`, `bias_relu`,
      `gelu`, `bias_gelu`, `bias_gelu_aux` (a training forward: the kernel
      yields the pre-activation `product + bias` too, cuBLASLt's aux
      matrix), `dgelu` / `dgelu_bgrad` (the backward: the product times
      the tanh gelu's derivative at a saved pre-activation, an input, and
      the sum of that over the output's columns, the bias gradient),
      `bgrada`, `bgradb`, or `accumulate`: the
      product is added to an input of the same type, the accumulator, by a
      GEMM with beta = 1 writing over it; docs/Fusion.md).
    * `kind = streaming`: a contraction, the row reductions and maps of a
      softmax (or, backward, its recomputation) and the contractions that
      consume the result, run as one kernel streaming over the key
      dimension with running statistics; `streaming` (a
      `#sluice<streaming ...>`) summarizes it. Operands and results in a
      fixed order: forward `(q, k, v) -> (o)` or `(o, lse)`, backward
      `(q, k, v, do, lse, d) -> (dq, dk, dv)` (docs/Fusion.md).

    `members` lists the report names of the ops it holds, in program order.
    A result listed in `packed` is stored with one bit per element (a
    dropout keep-mask); every other result is stored in its tensor type.

    ```mlir
    %y = sluice.kernel (%x, %b) {kind = fused, members = ["bias", "relu"],
                                 sluice.name = "k0"}
        : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>)
        -> !sluice.tensor<[j=4, i=8], f32> {
    ^bb0(%xa: !sluice.tensor<[j=4, i=8], f32>, %ba: !sluice.tensor<[i=8], f32>):
      %s = sluice.map (%xa, %ba) ...
      %r = sluice.map (%s) ...
      sluice.kernel_yield %r : !sluice.tensor<[j=4, i=8], f32>
    }
    ```
  }];
  let arguments = (ins Variadic<Sluice_Tensor>:$inputs,
                       DefaultValuedAttr<Sluice_KernelKindAttr, "KernelKind::fused">:$kind,
                       DefaultValuedAttr<StrArrayAttr, "{}">:$members,
                       OptionalAttr<Sluice_EpilogueAttr>:$epilogue,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$packed,
                       OptionalAttr<Sluice_StreamingAttr>:$streaming);
  let results = (outs Variadic<Sluice_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The body's terminator.
    KernelYieldOp getYield();
    /// The body's block.
    ::mlir::Block &getBlock() { return getBody().front(); }
    /// True if result `index` is stored bit-packed.
    bool isPacked(unsigned index) {
      return ::llvm::is_contained(getPacked(), static_cast<int64_t>(index));
    }
    /// The contraction of a `gemm` kernel (null for a fused kernel).
    ContractOp getContraction();
    /// The block argument an `accumulate` kernel adds its product to (the
    /// GEMM's C with beta = 1); null for any other kernel.
    ::mlir::BlockArgument getAccumulator();
    /// The input whose buffer an `accumulate` kernel's result reuses: its
    /// accumulator, when that views a value computed in the graph (not a
    /// graph argument) that nothing after the kernel reads. Null otherwise
    /// (the accumulator is then copied into the result first).
    ::mlir::Value getAccumulatedStorage();
  }];
}

def Sluice_KernelYieldOp : Sluice_Op<"kernel_yield", [
    Pure, HasParent<"KernelOp">, ReturnLike, Terminator]> {
  let summary = "Yields a kernel's results";
  let arguments = (ins Variadic<Sluice_Tensor>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
}

//===----------------------------------------------------------------------===//
// Primitives
//===----------------------------------------------------------------------===//

def Sluice_ContractOp : Sluice_Op<"contract", [Pure]> {
  let summary = "An einsum over dimension names, times a scale factor";
  let description = [{
    `result[o] = scale * sum_c lhs[..] * rhs[..]`, where dimensions are matched
    by name. A dimension in both operands and the result is a batch dimension,
    in both operands only a contracted one, in one operand and the result a
    free one. Every result dimension must come from an operand, and every
    operand dimension must appear in the other operand or the result.

    ```mlir
    %s = sluice.contract %q, %k {scale = 0.125 : f64}
        : (!sluice.tensor<[b=2, j=4, h=2, p=8], f32>,
           !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
        -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
    ```
  }];
  let arguments = (ins Sluice_Tensor:$lhs, Sluice_Tensor:$rhs,
                       DefaultValuedAttr<F64Attr, "1.0">:$scale);
  let results = (outs Sluice_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Sluice_MapOp : Sluice_Op<"map", [Pure, SingleBlock]> {
  let summary = "An element-wise map with a scalar body, broadcasting by name";
  let description = [{
    Applies the scalar body to every element of the result's iteration space.
    Each input's dimensions must be a subset of the result's (matched by name
    and size); an input is broadcast along the result dimensions it lacks.
    The body's block arguments are one float per input (the element, widened
    to the compute type) followed by one `index` per name in `index_dims`
    (the element's position along that dimension). The body holds `arith`
    and `math` ops and ends in `sluice.yield`; the yielded float is rounded to
    the result's element type.

    ```mlir
    %y = sluice.map (%x, %b) : (!sluice.tensor<[j=4, i=8], f32>,
                               !sluice.tensor<[i=8], f32>)
        -> !sluice.tensor<[j=4, i=8], f32> {
    ^bb0(%xv: f32, %bv: f32):
      %s = arith.addf %xv, %bv : f32
      sluice.yield %s : f32
    }
    ```
  }];
  let arguments = (ins Variadic<Sluice_Tensor>:$inputs,
                       DefaultValuedAttr<StrArrayAttr, "{}">:$index_dims);
  let results = (outs Sluice_Tensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $result) $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The body's terminator.
    YieldOp getYield();
  }];
}

def Sluice_ReduceOp : Sluice_Op<"reduce", [Pure]> {
  let summary = "A sum or max over named dimensions";
  let description = [{
    Removes the dimensions listed in `dims` by combining their elements with
    `kind`. The result has exactly the remaining dimensions, in any layout.

    ```mlir
    %m = sluice.reduce max %s over ["k"]
        : !sluice.tensor<[h=2, j=4, k=4], f32> -> !sluice.tensor<[h=2, j=4], f32>
    ```
  }];
  let arguments = (ins Sluice_ReduceKindAttr:$kind, Sluice_Tensor:$input,
                       StrArrayAttr:$dims);
  let results = (outs Sluice_Tensor:$result);
  let assemblyFormat = [{
    custom<ReduceKind>($kind) $input `over` $dims attr-dict `:` qualified(type($input))
    `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Sluice_RandomMaskOp : Sluice_Op<"random_mask", [Pure]> {
  let summary = "A dropout keep-mask drawn from the counter-based RNG stream";
  let description = [{
    Each element is 1 with probability `1 - probability` and 0 otherwise.
    Element `e` draws from the counter-based generator keyed by the run's
    seed at counter (`e`, `stream`), where `e` is the element's row-major
    index with the dimensions ordered by name, so the mask does not depend on
    the layout. Two ops with the same `stream` and shape draw the same mask.

    ```mlir
    %m = sluice.random_mask {probability = 1.000000e-01 : f64, stream = 0 : i64}
        : !sluice.tensor<[b=2, j=4, i=8], f32>
    ```
  }];
  let arguments = (ins F64Attr:$probability, I64Attr:$stream);
  let results = (outs Sluice_Tensor:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Sluice_RelayoutOp : Sluice_Op<"relayout", [Pure]> {
  let summary = "Copies a tensor into another layout (a transpose)";
  let description = [{
    The result has the same named dimensions and element type in another
    order. Values do not change; the bytes move.

    ```mlir
    %t = sluice.relayout %x : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8, j=4], f32>
    ```
  }];
  let arguments = (ins Sluice_Tensor:$input);
  let results = (outs Sluice_Tensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Sluice_RenameOp : Sluice_Op<"rename", [Pure]> {
  let summary = "Gives a tensor's dimensions other names (a view, no data moves)";
  let description = [{
    The result aliases the operand: dimension `n` of the result is dimension
    `n` of the operand under a new name, with the same size. Used where one
    tensor plays two roles, e.g. the input sequence as queries (`j`) and as
    keys (`k`).

    ```mlir
    %xk = sluice.rename %x : !sluice.tensor<[b=2, j=4, i=8], f32> -> !sluice.tensor<[b=2, k=4, i=8], f32>
    ```
  }];
  let arguments = (ins Sluice_Tensor:$input);
  let results = (outs Sluice_Tensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Composites
//===----------------------------------------------------------------------===//

class Sluice_CompositeOp<string mnemonic, list<Trait> traits = []>
    : Sluice_Op<mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<Sluice_CompositeOpInterface>])>;

def Sluice_BiasAddOp : Sluice_CompositeOp<"bias_add"> {
  let summary = "Adds a bias broadcast along the dimensions it lacks";
  let arguments = (ins Sluice_Tensor:$input, Sluice_Tensor:$bias);
  let results = (outs Sluice_Tensor:$result);
  let assemblyFormat = "$input `,` $bias attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Sluice_ResidualAddOp : Sluice_CompositeOp<"residual_add"> {
  let summary = "Adds two tensors with the same dimensions (a residual connection)";
  let arguments = (ins Sluice_Tensor:$lhs, Sluice_Tensor:$rhs);
  let results = (outs Sluice_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Sluice_SoftmaxOp : Sluice_CompositeOp<"softmax", [SameOperandsAndResultType]> {
  let summary = "Softmax along one named dimension";
  let description = [{
    `y = exp(x - max_d x) / sum_d exp(x - max_d x)` along dimension `dim`.
  }];
  let arguments = (ins Sluice_Tensor:$input, StrAttr:$dim);
  let results = (outs Sluice_Tensor:$result);
  let assemblyFormat = "$input `over` $dim attr-dict `:` qualified(type($input))";
  let hasVerifier = 1;
}

def Sluice_LayerNormOp : Sluice_CompositeOp<"layernorm"> {
  let summary = "Layer normalization that also returns its mean and rstd";
  let description = [{
    Over the dimensions `dims`: `mean = avg(x)`, `var = avg((x - mean)^2)`
    (biased), `rstd = 1 / sqrt(var + eps)`,
    `y = (x - mean) * rstd * scale + bias`. `scale` and `bias` have exactly
    the normalized dimensions; `mean` and `rstd` have the others.
  }];
  let arguments = (ins Sluice_Tensor:$input, Sluice_Tensor:$scale,
                       Sluice_Tensor:$bias, StrArrayAttr:$dims,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Sluice_Tensor:$result, Sluice_Tensor:$mean,
                      Sluice_Tensor:$rstd);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `over` $dims attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Sluice_RMSNormOp : Sluice_CompositeOp<"rmsnorm"> {
  let summary = "Root-mean-square normalization that also returns its rstd";
  let description = [{
    Over the dimensions `dims`: `rstd = 1 / sqrt(avg(x^2) + eps)`,
    `y = x * rstd * scale` (no centering, no bias; LLaMA's `RMSNorm`).
    `scale` has exactly the normalized dimensions; `rstd` has the others.

    ```mlir
    %y, %rstd = sluice.rmsnorm %x, %g over ["i"] {eps = 1.0e-06 : f64}
        : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[i=8], f32>)
        -> (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[b=2, j=4], f32>)
    ```
  }];
  let arguments = (ins Sluice_Tensor:$input, Sluice_Tensor:$scale,
                       StrArrayAttr:$dims,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Sluice_Tensor:$result, Sluice_Tensor:$rstd);
  let assemblyFormat = [{
    $input `,` $scale `over` $dims attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

class Sluice_ActivationOp<string mnemonic, string formula>
    : Sluice_CompositeOp<mnemonic, [SameOperandsAndResultType]> {
  let summary = "Element-wise " # formula;
  let arguments = (ins Sluice_Tensor:$input);
  let results = (outs Sluice_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
}

def Sluice_ReluOp : Sluice_ActivationOp<"relu", "max(x, 0)">;
def Sluice_GeluOp : Sluice_ActivationOp<"gelu", "0.5 x (1 + erf(x / sqrt 2))">;
def Sluice_GeluTanhOp : Sluice_ActivationOp<"gelu_tanh",
    "0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))">;

def Sluice_SiluOp : Sluice_ActivationOp<"silu", "x / (1 + exp(-x)) (SiLU, swish)">;

def Sluice_SwiGLUOp : Sluice_CompositeOp<"swiglu", [SameOperandsAndResultType]> {
  let summary = "The gated product silu(gate) * up of a SwiGLU feed-forward block";
  let description = [{
    `result = gate / (1 + exp(-gate)) * up`, element-wise; both operands
    and the result have one type.

    ```mlir
    %h = sluice.swiglu %gate, %up : !sluice.tensor<[b=2, j=4, u=16], f32>
    ```
  }];
  let arguments = (ins Sluice_Tensor:$gate, Sluice_Tensor:$up);
  let results = (outs Sluice_Tensor:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` qualified(type($result))";
}

def Sluice_RopeOp : Sluice_CompositeOp<"rope", [SameOperandsAndResultType]> {
  let summary = "Rotary position embedding in the rotate-half convention";
  let description = [{
    The head feature is held as two named dimensions: `pair` (size 2, the
    half: feature `d` or `d + head_dim / 2`) and `freq` (size F =
    head_dim / 2, the feature `d` within the half). At position `pos`
    (the index along `position`) and frequency `f`, with
    `angle = pos * theta^(-f / F)`, each pair is rotated:
    `y[0] = x[0] cos(angle) - x[1] sin(angle)`,
    `y[1] = x[1] cos(angle) + x[0] sin(angle)` (HF LLaMA's
    `x * cos + rotate_half(x) * sin`).

    ```mlir
    %y = sluice.rope %q pair "r" freq "f" position "j" {theta = 1.0e+04 : f64}
        : !sluice.tensor<[b=2, j=4, h=2, r=2, f=4], f32>
    ```
  }];
  let arguments = (ins Sluice_Tensor:$input, StrAttr:$pair, StrAttr:$freq,
                       StrAttr:$position,
                       DefaultValuedAttr<F64Attr, "1.0e+04">:$theta);
  let results = (outs Sluice_Tensor:$result);
  let assemblyFormat = [{
    $input `pair` $pair `freq` $freq `position` $position attr-dict `:`
    qualified(type($input))
  }];
  let hasVerifier = 1;
}

def Sluice_DropoutOp : Sluice_CompositeOp<"dropout"> {
  let summary = "Dropout: zeroes elements with a probability, scales the rest";
  let description = [{
    `mask = random_mask(probability, stream)`,
    `result = input * mask / (1 - probability)`. The mask is an explicit
    result with the input's type.
  }];
  let arguments = (ins Sluice_Tensor:$input, F64Attr:$probability,
                       I64Attr:$stream);
  let results = (outs Sluice_Tensor:$result, Sluice_Tensor:$mask);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))
    `,` qualified(type($mask))
  }];
  let hasVerifier = 1;
}

def Sluice_CausalMaskOp : Sluice_CompositeOp<"causal_mask", [SameOperandsAndResultType]> {
  let summary = "Sets scores where the key comes after the query to -inf";
  let description = [{
    `result = key > query ? -inf : input`, where `query` and `key` name the
    dimensions holding the query and key positions.
  }];
  let arguments = (ins Sluice_Tensor:$input, StrAttr:$query, StrAttr:$key);
  let results = (outs Sluice_Tensor:$result);
  let assemblyFormat = [{
    $input `query` $query `key` $key attr-dict `:` qualified(type($input))
  }];
  let hasVerifier = 1;
}

#endif // SLUICE_OPS_TD
