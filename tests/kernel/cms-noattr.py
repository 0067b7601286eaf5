#!/usr/bin/env python3
"""The CMS of an ML-DSA module signature without signed attributes, made
from sign-file 7.2's (k72m.sh): OpenSSL 3.5/3.6 cannot make an ML-DSA CMS
without signed attributes, so this takes sign-file's detached CMS (one
SignerInfo, no certificates), drops the SignerInfo's signedAttrs and puts
in its place as the signature a pure ML-DSA signature of the module itself
(`openssl pkeyutl -sign -rawin`). Everything else stays sign-file's: the
kernel's oracle for the form modsign writes by default, independent of
modsign.

Usage: cms-noattr.py SIGNFILE-P7S RAW-SIGNATURE OUT-P7S
"""
import sys


def tlv(buf, i):
    """(tag, start of the content, content length) of the element at i."""
    if i + 2 > len(buf):
        raise ValueError("truncated header")
    tag, n = buf[i], buf[i + 1]
    i += 2
    if n & 0x80:
        k = n & 0x7F
        if k == 0 or k > 4 or i + k > len(buf):
            raise ValueError("bad length")
        n = int.from_bytes(buf[i:i + k], "big")
        i += k
    if i + n > len(buf):
        raise ValueError("content beyond the end")
    return tag, i, n


def children(content):
    """[(tag, content)] of a constructed element's content."""
    out, i = [], 0
    while i < len(content):
        tag, start, n = tlv(content, i)
        out.append((tag, content[start:start + n]))
        i = start + n
    return out


def enc(tag, content):
    n = len(content)
    if n < 0x80:
        head = bytes([n])
    else:
        size = n.to_bytes((n.bit_length() + 7) // 8, "big")
        head = bytes([0x80 | len(size)]) + size
    return bytes([tag]) + head + content


def only(items, tag, what):
    if len(items) != 1 or items[0][0] != tag:
        raise ValueError("expected one %s" % what)
    return items[0][1]


def main():
    p7s = open(sys.argv[1], "rb").read()
    raw = open(sys.argv[2], "rb").read()
    ci = children(only(children(p7s), 0x30, "ContentInfo"))
    if len(ci) != 2 or ci[1][0] != 0xA0:
        raise ValueError("ContentInfo: no [0] content")
    sd = children(only(children(ci[1][1]), 0x30, "SignedData"))
    if sd[-1][0] != 0x31:
        raise ValueError("SignedData: no signerInfos")
    si = children(only(children(sd[-1][1]), 0x30, "SignerInfo"))
    if not any(t == 0xA0 for t, _ in si):
        raise ValueError("SignerInfo: no signedAttrs to drop")
    new_si = b"".join(enc(t, raw if t == 0x04 else c) for t, c in si if t != 0xA0)
    sd[-1] = (0x31, enc(0x30, new_si))
    ci[1] = (0xA0, enc(0x30, b"".join(enc(t, c) for t, c in sd)))
    out = enc(0x30, b"".join(enc(t, c) for t, c in ci))
    open(sys.argv[3], "wb").write(out)


if __name__ == "__main__":
    main()
