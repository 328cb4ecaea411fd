/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Force-included into Zydis' sources and users (ZYAN_CUSTOM_LIBC): Zycore's LibC hooks
 * mapped to the compiler builtins, which the kernel (and a host libc) provide as real
 * memcpy/memset, instead of Zycore's byte-at-a-time fallbacks.
 */
#ifndef OKP_ZYDIS_LIBC_H
#define OKP_ZYDIS_LIBC_H

#define ZYAN_MEMCHR __builtin_memchr
#define ZYAN_MEMCMP __builtin_memcmp
#define ZYAN_MEMCPY __builtin_memcpy
#define ZYAN_MEMMOVE __builtin_memmove
#define ZYAN_MEMSET __builtin_memset
#define ZYAN_STRCAT __builtin_strcat
#define ZYAN_STRCHR __builtin_strchr
#define ZYAN_STRCMP __builtin_strcmp
#define ZYAN_STRCPY __builtin_strcpy
#define ZYAN_STRLEN __builtin_strlen
#define ZYAN_STRNCMP __builtin_strncmp
#define ZYAN_STRNCPY __builtin_strncpy
#define ZYAN_STRRCHR __builtin_strrchr
#define ZYAN_STRSTR __builtin_strstr

#endif /* OKP_ZYDIS_LIBC_H */
