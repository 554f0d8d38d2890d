/* Generated from runtime/protocol/src/abi.rs by its test `c_abi_header_is_current`;
   do not edit. The codes of symm's C ABI, shared with compiled programs. */
#ifndef SYMM_ABI_H
#define SYMM_ABI_H

enum symm_dtype { SYMM_F32 = 0, SYMM_F16 = 1, SYMM_BF16 = 2 };
enum symm_reduce { SYMM_SUM = 0, SYMM_MAX = 1, SYMM_MIN = 2 };
enum symm_algorithm { SYMM_ONE_SHOT = 0, SYMM_TWO_SHOT = 1 };
enum symm_matmul_layout { SYMM_ROW_MAJOR = 0, SYMM_TRANSPOSED_B = 1, SYMM_TRANSPOSED_A = 2, SYMM_TRANSPOSED_BOTH = 3 };

#endif /* SYMM_ABI_H */
