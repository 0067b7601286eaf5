#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Regenerates the ML-DSA known-answer files of this directory from the
OpenSSL 3.5 source tarball (see README): ACVP sigVer (all cases), ACVP sigGen
(some cases of each parameter set; their public key derived here from the
private key and checked against the key's tr = SHAKE256(pk, 64)) and the
Wycheproof verify sets. Usage: extract.py openssl_3.5.x.orig.tar.gz"""
import hashlib
import sys
import tarfile

Q = 8380417
PARAMS = {  # k, l, eta
    '44': (4, 4, 2),
    '65': (6, 5, 4),
    '87': (8, 7, 2),
}
DATA = 'test/recipes/30-test_evp_data/'


def zetas():
    def brv(x):
        return int('{:08b}'.format(x)[::-1], 2)
    return [pow(1753, brv(i), Q) for i in range(256)]


ZETAS = zetas()


def ntt(w):
    w = list(w)
    m, ln = 0, 128
    while ln >= 1:
        start = 0
        while start < 256:
            m += 1
            z = ZETAS[m]
            for j in range(start, start + ln):
                t = z * w[j + ln] % Q
                w[j + ln] = (w[j] - t) % Q
                w[j] = (w[j] + t) % Q
            start += 2 * ln
        ln //= 2
    return w


def intt(w):
    w = list(w)
    m, ln = 256, 1
    while ln < 256:
        start = 0
        while start < 256:
            m -= 1
            z = -ZETAS[m]
            for j in range(start, start + ln):
                t = w[j]
                w[j] = (t + w[j + ln]) % Q
                w[j + ln] = z * (t - w[j + ln]) % Q
            start += 2 * ln
        ln *= 2
    return [x * 8347681 % Q for x in w]


def rej_ntt(seed):
    out = []
    stream = hashlib.shake_128(seed).digest(4096)
    i = 0
    while len(out) < 256:
        v = stream[i] | stream[i + 1] << 8 | (stream[i + 2] & 0x7f) << 16
        i += 3
        if v < Q:
            out.append(v)
    return out


def unpack(b, bits):
    v = int.from_bytes(b, 'little')
    return [(v >> (bits * i)) & ((1 << bits) - 1) for i in range(256)]


def pk_from_sk(ps, sk):
    k, l, eta = PARAMS[ps]
    rho, tr = sk[:32], sk[64:128]
    eb = 3 if eta == 2 else 4
    off = 128
    s1, s2 = [], []
    for vec, n in ((s1, l), (s2, k)):
        for _ in range(n):
            vec.append([(eta - c) % Q for c in unpack(sk[off:off + 32 * eb], eb)])
            off += 32 * eb
    s1h = [ntt(p) for p in s1]
    pk = bytearray(rho)
    for r in range(k):
        acc = [0] * 256
        for s in range(l):
            a = rej_ntt(rho + bytes([s, r]))
            acc = [(x + y * z) % Q for x, y, z in zip(acc, a, s1h[s])]
        t = [(x + y) % Q for x, y in zip(intt(acc), s2[r])]
        t1 = []
        for c in t:
            r0 = c % 8192
            if r0 > 4096:
                r0 -= 8192
            t1.append((c - r0) >> 13)
        pk += sum(c << (10 * i) for i, c in enumerate(t1)).to_bytes(320, 'little')
    if hashlib.shake_256(bytes(pk)).digest(64) != tr:
        raise SystemExit('derived public key does not match tr')
    return bytes(pk).hex()


def blocks(text):
    for b in text.split('\n\n'):
        d = {'ctrl': {}}
        for line in b.splitlines():
            if line.startswith('#'):
                d.setdefault('comment', line[1:].strip())
                continue
            if ' = ' not in line:
                continue
            key, val = line.split(' = ', 1)
            if key == 'Ctrl':
                ck, cv = val.split(':', 1)
                d['ctrl'][ck] = cv
            else:
                d[key] = val
        yield d


def case(res, d, ps):
    ctrl = d['ctrl']
    if ctrl.get('message-encoding', '1') != '1':
        raise SystemExit('only pure-mode message encoding is expected')
    mode = 'mu' if ctrl.get('mu') == '1' else 'pure'
    ctx = ctrl.get('hexcontext-string', '') or '-'
    msg = d.get('Input', '') or '-'
    return 'v %s %s %s %s %s %s' % (ps, res, mode, ctx.lower(), msg.lower(), d['Output'].lower())


def verify_file(text, out, src):
    keys, last = {}, [None]
    for d in blocks(text):
        if 'PublicKeyRaw' in d:
            name, alg, hexpk = d['PublicKeyRaw'].split(':')
            keys[name] = (alg[-2:], hexpk.lower())
            continue
        com = d.get('comment')
        if com:
            out.append('# %s: %s' % (src, com))
        if 'KeyFromData' in d:
            out.append('k %s bad %s' % (d['KeyFromData'][-2:], d['ctrl']['hexpub'].lower()))
            last[0] = None
            continue
        if 'Verify-Message-Public' not in d:
            continue
        ps, hexpk = keys[d['Verify-Message-Public'].split(':')[1]]
        if last[0] != hexpk:
            out.append('k %s ok %s' % (ps, hexpk))
            last[0] = hexpk
        res = 'ok' if 'Result' not in d else 'bad'
        out.append(case(res, d, ps))


def siggen_file(text, out, per_mode):
    keys, taken = {}, {}
    for d in blocks(text):
        if 'PrivateKeyRaw' in d:
            name, alg, hexsk = d['PrivateKeyRaw'].split(':')
            keys[name] = (alg[-2:], bytes.fromhex(hexsk))
            continue
        if 'Sign-Message' not in d:
            continue
        ps, sk = keys[d['Sign-Message'].split(':')[1]]
        mode = 'mu' if d['ctrl'].get('mu') == '1' else 'pure'
        if taken.get((ps, mode), 0) >= per_mode:
            continue
        taken[(ps, mode)] = taken.get((ps, mode), 0) + 1
        out.append('# ACVP sigGen: ML-DSA-%s, public key derived from the private key' % ps)
        out.append('k %s ok %s' % (ps, pk_from_sk(ps, sk)))
        out.append(case('ok', d, ps))


def main():
    tar = tarfile.open(sys.argv[1])
    root = tar.getnames()[0].split('/')[0] + '/'

    def read(name):
        return tar.extractfile(root + DATA + name).read().decode()

    head = ['# Generated by extract.py from %s; see README.' % sys.argv[1].split('/')[-1],
            '# k <set> <ok|bad> <pk>: the public key of the cases below it',
            '# v <set> <ok|bad> <pure|mu> <ctx|-> <msg or mu|-> <sig>']
    out = list(head)
    verify_file(read('evppkey_ml_dsa_sigver.txt'), out, 'ACVP sigVer')
    siggen_file(read('evppkey_ml_dsa_siggen.txt'), out, 3)
    open('acvp.txt', 'w').write('\n'.join(out) + '\n')
    for ps in ('44', '65', '87'):
        out = list(head)
        verify_file(read('evppkey_ml_dsa_%s_wycheproof_verify.txt' % ps), out, 'Wycheproof')
        open('wycheproof_%s.txt' % ps, 'w').write('\n'.join(out) + '\n')


main()
