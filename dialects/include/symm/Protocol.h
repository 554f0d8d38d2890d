/* Generated from runtime/protocol/src/lib.rs by its test `c_header_is_current`;
   do not edit. The signal-pad protocol that the runtime and the compiler share. */
#ifndef SYMM_PROTOCOL_H
#define SYMM_PROTOCOL_H

#define SYMM_PROTOCOL_MAX_WORLD 8
#define SYMM_PROTOCOL_MAX_BLOCKS 264
#define SYMM_PROTOCOL_THREADS 512
#define SYMM_PROTOCOL_CAS_BYTES 8448
#define SYMM_PROTOCOL_PAD_BYTES 16896
#define SYMM_PROTOCOL_DESCRIPTOR_WORDS 9

#define SYMM_DESCRIPTOR_BASES 0
#define SYMM_DESCRIPTOR_PADS 1
#define SYMM_DESCRIPTOR_STAGING 2
#define SYMM_DESCRIPTOR_SLOT 3
#define SYMM_DESCRIPTOR_EPOCHS 4
#define SYMM_DESCRIPTOR_RANK 5
#define SYMM_DESCRIPTOR_WORLD 6
#define SYMM_DESCRIPTOR_TIMEOUT 7
#define SYMM_DESCRIPTOR_ERROR 8

#endif /* SYMM_PROTOCOL_H */
