//===- DropoutOrder.h - the canonical element order of dropout draws -*- C++ -*-===//
//
// The one definition of the element index `e` that Philox.h's dropout draw
// takes for a sluice.random_mask: row-major over the mask type's dims
// sorted by name, except that the innermost dim of its layout comes last.
// Putting the memory-innermost dim last makes four consecutive elements in
// memory four consecutive indices, so one Philox call (four words) serves a
// thread's vector. The reference interpreter and every emitter (fused and
// streaming kernels, both targets) derive their indices from here.
//
// The draw depends on the names, the sizes and which dim is innermost; the
// order of the other dims in the layout does not change it. A pass that
// changes the innermost dim of a random_mask's result changes its draw, so
// a mask and its backward recomputation must keep the same innermost dim.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECTS_SLUICE_DROPOUTORDER_H
#define SLUICE_DIALECTS_SLUICE_DROPOUTORDER_H

#include "dialects/sluice/SluiceTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::sluice {

/// The dims of `type` in the dropout draw's element order: sorted by name,
/// the layout's innermost dim last.
inline SmallVector<StringRef> dropoutElementOrder(NamedTensorType type) {
  SmallVector<StringRef> names;
  for (StringAttr name : type.getDimNames())
    names.push_back(name.getValue());
  if (names.empty())
    return names;
  StringRef innermost = names.back();
  names.pop_back();
  llvm::sort(names);
  names.push_back(innermost);
  return names;
}

/// For each dim of `type` in layout order, its stride in the dropout
/// element index (so e = sum of index_d * stride_d).
inline SmallVector<int64_t> dropoutElementStrides(NamedTensorType type) {
  SmallVector<StringRef> order = dropoutElementOrder(type);
  SmallVector<int64_t> strides(type.getRank(), 0);
  int64_t stride = 1;
  for (StringRef name : llvm::reverse(order)) {
    auto *position = llvm::find_if(type.getDimNames(), [&](StringAttr dim) {
      return dim.getValue() == name;
    });
    unsigned index = position - type.getDimNames().begin();
    strides[index] = stride;
    stride *= type.getSizes()[index];
  }
  return strides;
}

} // namespace mlir::sluice

#endif // SLUICE_DIALECTS_SLUICE_DROPOUTORDER_H
