#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Recovers a kernel's symbols, in System.map's format, from the kallsyms tables inside a flat
# image, for riscv_detour_survey on a kernel that ships none (Debian's riscv64 vmlinuz: an
# EFI-stub Image; its System.map is a stub pointing at the -dbg package).
#
#   kallsyms_from_image.py IMAGE > SYMBOLS
#
# The tables, as scripts/kallsyms.c (6.12) writes them, each label aligned:
#   kallsyms_num_syms (.long), kallsyms_names (per symbol: ULEB128 length, token indices),
#   kallsyms_markers (.long per 256 symbols), kallsyms_token_table (256 .asciz),
#   kallsyms_token_index (256 .short), kallsyms_offsets (.long per symbol, relative to)
#   kallsyms_relative_base (a pointer).
# Found from the token table, whose single-character tokens "0".."9" sit side by side, then
# checked against each other (the index against the table, the markers' count against the
# symbols', the names ending where the markers start). 64-bit little-endian kernels only.
import re
import struct
import sys


def u32(data, at):
    return struct.unpack_from('<I', data, at)[0]


def main():
    data = open(sys.argv[1], 'rb').read()
    digits = re.escape(b'0\x001\x002\x003\x004\x005\x006\x007\x008\x009\x00')
    for m in re.finditer(digits, data):
        # Walk back over the 48 tokens before "0" (no token is empty).
        start = m.start()
        for _ in range(48):
            start = data.rfind(b'\x00', 0, start - 1) + 1
        tokens, at = [], start
        for _ in range(256):
            end = data.index(b'\x00', at)
            tokens.append(data[at:end])
            at = end + 1
        offsets, o = [], 0
        for t in tokens:
            offsets.append(o)
            o += len(t) + 1
        index = next((a for a in range((at + 1) & ~1, at + 16, 2)
                      if list(struct.unpack_from('<256H', data, a)) == offsets), None)
        if tokens[48] == b'0' and index is not None:
            token_table = start
            break
    else:
        sys.exit('no kallsyms token table found')

    # kallsyms_offsets: from after the index to the relative base (a kernel address).
    first = (index + 512 + 3) & ~3
    at, n = first, 0
    while not (at % 8 == 0 and u32(data, at + 4) == 0xffffffff and u32(data, at) >= 0x80000000
               and n > 1000):
        at, n = at + 4, n + 1
    relative_base = struct.unpack_from('<Q', data, at)[0]
    while n and u32(data, first + 4 * (n - 1)) == 0:  # alignment before the base
        n -= 1

    # kallsyms_markers end before the token table: a 0 first, then increasing.
    end = token_table - 4
    while u32(data, end) == 0:
        end -= 4
    markers = end
    while u32(data, markers) != 0:
        markers -= 4
    if (end - markers) // 4 + 1 != (n + 255) // 256:
        sys.exit('the markers do not match %d symbols' % n)

    def names_end(at):
        for _ in range(n):
            length = data[at]
            at += 1
            if length & 0x80:
                length = (length & 0x7f) | data[at] << 7
                at += 1
            if not length:
                return None
            at += length
            if at > markers:
                return None
        return at

    # kallsyms_num_syms: n, then the names, which end at the markers (give or take alignment).
    names, at = None, markers - 4
    needle = struct.pack('<I', n)
    while names is None:
        at = data.rfind(needle, 0, at)
        if at < 0 or markers - at > 16 * 1024 * 1024:
            sys.exit('no kallsyms_num_syms found')
        for start in (at + 4, (at + 4 + 7) & ~7):
            e = names_end(start)
            if e is not None and markers - e < 16:
                names = start
                break

    offsets = struct.unpack_from('<%dI' % n, data, first)
    at = names
    for k in range(n):
        length = data[at]
        at += 1
        if length & 0x80:
            length = (length & 0x7f) | data[at] << 7
            at += 1
        name = b''.join(tokens[c] for c in data[at:at + length]).decode('latin1')
        at += length
        print('%016x %s %s' % (relative_base + offsets[k], name[0], name[1:]))


if __name__ == '__main__':
    main()
