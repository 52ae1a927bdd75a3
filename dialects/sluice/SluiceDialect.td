//===- SluiceDialect.td - the sluice dialect ---------------*- tablegen -*-===//
//
// Sluice models a transformer layer as a dataflow graph over tensors with
// named dimensions. The meaning of an op never depends on the physical order
// (layout) of its tensors' dimensions; the layout lives in the type only.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECT_TD
#define SLUICE_DIALECT_TD

include "mlir/IR/OpBase.td"

def Sluice_Dialect : Dialect {
  let name = "sluice";
  let cppNamespace = "::mlir::sluice";
  let summary = "Dataflow graphs of transformer layers over named-dimension tensors";
  let description = [{
    The `sluice` dialect describes a transformer layer as a graph of tensor
    operations. Tensors carry *named dimensions*; their written order is the
    physical layout (row-major, last fastest). Contractions are einsums over
    names, element-wise ops broadcast by name and reductions name the
    dimensions they remove, so changing a layout rewrites types and never
    semantics.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let extraClassDeclaration = [{
    /// The argument/result attribute that names a graph's boundary tensor.
    static constexpr ::llvm::StringLiteral getNameAttrName() {
      return ::llvm::StringLiteral("sluice.name");
    }
    /// The argument/result attribute that gives a boundary tensor's logical
    /// (PyTorch) shape when it differs from the named dimensions' sizes.
    static constexpr ::llvm::StringLiteral getShapeAttrName() {
      return ::llvm::StringLiteral("sluice.shape");
    }
    /// The op attribute that names an op in reports.
    static constexpr ::llvm::StringLiteral getOpNameAttrName() {
      return ::llvm::StringLiteral("sluice.name");
    }
    /// The op attribute naming the composite op (by its report name) that a
    /// primitive implements, or whose gradient it computes. The baseline
    /// accounting runs one kernel per origin.
    static constexpr ::llvm::StringLiteral getOriginAttrName() {
      return ::llvm::StringLiteral("sluice.origin");
    }
    /// The graph argument/result attribute marking a tensor the forward
    /// graph saves for its backward graph: a forward result and the backward
    /// argument it feeds carry the same `sluice.saved = "<forward value>"`.
    static constexpr ::llvm::StringLiteral getSavedAttrName() {
      return ::llvm::StringLiteral("sluice.saved");
    }
    /// The op attribute saying what a primitive stands for, a typed
    /// `#sluice<origin_kind ...>` (OriginKind): the mnemonic of its composite
    /// (dropout, layernorm, ...), grad_acc / zero for gradient sums and zero
    /// gradients, or layout for relayouts inserted for code generation.
    /// Read and written through getOriginKind / setOriginKind.
    static constexpr ::llvm::StringLiteral getOriginKindAttrName() {
      return ::llvm::StringLiteral("sluice.origin_kind");
    }

  private:
    void registerTypes();

  public:
  }];
}

class Sluice_Op<string mnemonic, list<Trait> traits = []>
    : Op<Sluice_Dialect, mnemonic, traits>;

#endif // SLUICE_DIALECT_TD
