//===- SluiceTypes.td - sluice types -----------------------*- tablegen -*-===//

#ifndef SLUICE_TYPES_TD
#define SLUICE_TYPES_TD

include "dialects/sluice/SluiceDialect.td"
include "mlir/IR/AttrTypeBase.td"

def Sluice_NamedTensorType : TypeDef<Sluice_Dialect, "NamedTensor"> {
  let mnemonic = "tensor";
  let summary = "A tensor with named dimensions; the written order is the layout";
  let description = [{
    A tensor whose dimensions carry names. The order in which they are
    written is the physical layout: row-major, the last dimension fastest.
    Every name appears once. The element type is f32, f16 or bf16.

    ```mlir
    !sluice.tensor<[b=8, j=512, i=1024], f16>
    !sluice.tensor<[], f32>    // a scalar
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"::mlir::StringAttr", "dimension names, in layout order">:$dimNames,
    ArrayRefParameter<"int64_t", "dimension sizes, in layout order">:$sizes,
    "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins
        "::llvm::ArrayRef<::mlir::StringAttr>":$dimNames,
        "::llvm::ArrayRef<int64_t>":$sizes, "::mlir::Type":$elementType), [{
      return $_get(elementType.getContext(), dimNames, sizes, elementType);
    }]>,
  ];
  let extraClassDeclaration = [{
    /// Builds a tensor type from (name, size) pairs in layout order.
    static NamedTensorType get(::mlir::MLIRContext *context,
        ::llvm::ArrayRef<std::pair<::llvm::StringRef, int64_t>> dims,
        ::mlir::Type elementType);
    /// Like get(), but returns a null type and emits through `emitError`
    /// when the parameters are invalid.
    static NamedTensorType getChecked(
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
        ::mlir::MLIRContext *context, ::llvm::ArrayRef<::mlir::StringAttr> dimNames,
        ::llvm::ArrayRef<int64_t> sizes, ::mlir::Type elementType);

    unsigned getRank() const { return getDimNames().size(); }
    /// The position of dimension `name` in the layout, if present.
    std::optional<unsigned> getDimPosition(::llvm::StringRef name) const;
    bool hasDim(::llvm::StringRef name) const {
      return getDimPosition(name).has_value();
    }
    /// The size of dimension `name`; asserts that it exists.
    int64_t getDimSize(::llvm::StringRef name) const;
    /// The number of elements, or std::nullopt if it overflows 64 bits.
    std::optional<uint64_t> getNumElements() const;
    /// The bytes one element occupies in memory.
    unsigned getElementByteWidth() const;
    /// The bytes the whole tensor occupies, or std::nullopt on overflow.
    std::optional<uint64_t> getNumBytes() const;
    /// The bytes the tensor occupies in memory when stored `bitPacked` (one
    /// bit per element, rounded up to whole bytes: a kernel's packed mask
    /// result) or not (getNumBytes); std::nullopt on overflow. The one byte
    /// model of the accounting, the fusion cost and the memory plan.
    std::optional<uint64_t> getStoredBytes(bool bitPacked) const;
    /// The same dimensions and element type, another layout: `order` lists
    /// every dimension name once.
    NamedTensorType withLayout(::llvm::ArrayRef<::mlir::StringAttr> order) const;
    /// The same layout with another element type.
    NamedTensorType withElementType(::mlir::Type elementType) const;
    /// This type without the named dimensions (which must exist).
    NamedTensorType dropDims(::llvm::ArrayRef<::mlir::StringAttr> names) const;
    /// True if both types have the same set of (name, size) dimensions.
    bool hasSameDims(NamedTensorType other) const;
  }];
}

def Sluice_Tensor : Type<CPred<"::llvm::isa<::mlir::sluice::NamedTensorType>($_self)">,
    "sluice tensor", "::mlir::sluice::NamedTensorType">;

#endif // SLUICE_TYPES_TD
