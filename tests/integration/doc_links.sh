#!/bin/bash
# Every relative link in README.md and doc/*.md leads to a file that exists
# and, when it names an anchor (`#...`), to a heading of that file. Anchors
# are GitHub's: the heading's text lowercased, punctuation dropped (letters,
# digits, '-', '_' and spaces kept), spaces turned into '-', and "-1", "-2"
# added to the second and third heading of the same name. Links inside code
# (indented or fenced blocks, `code spans`) are not links and not checked;
# links with a scheme (https:, mailto:) are not checked either.
. "$(dirname "$0")/../lib/common.sh"
t_setup

# check_links FILE...: one line "FILE: target: why" per broken link; the
# status is 1 when there is one.
check_links() {
	python3 - "$@" <<'EOF'
import os, re, sys

def blocks(text):
    """The file's paragraphs outside code blocks, with their code spans
    removed, and its headings (outside code blocks)."""
    paras, heads, cur, fence = [], [], [], None
    for line in text.split("\n"):
        m = re.match(r"^ {0,3}(```+|~~~+)", line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        if line.strip() == "":
            if cur:
                paras.append("\n".join(cur))
            cur = []
            continue
        if not cur and re.match(r"^(    |\t)", line):
            continue            # an indented code block (not inside a paragraph)
        h = re.match(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if h:
            heads.append(h.group(2))
        cur.append(line)
    if cur:
        paras.append("\n".join(cur))
    return [re.sub(r"`+[^`]*`+", "", p) for p in paras], heads

def slug(heading):
    t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # a link: its text
    t = t.lower()
    t = "".join(c for c in t if c.isalnum() or c in "-_ ")
    return t.replace(" ", "-")

def anchors(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        seen, out = {}, set()
        for h in blocks(text)[1]:
            s = slug(h)
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else "%s-%d" % (s, n))
        for m in re.finditer(r"<a\s+(?:name|id)=\"([^\"]+)\"", text):
            out.add(m.group(1))
        cache[path] = out
    return cache[path]

bad = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        paras = blocks(f.read())[0]
    targets = []
    for p in paras:
        targets += re.findall(r"\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)", p)
        targets += re.findall(r"(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", p)
    for t in targets:
        if t == "" or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", t):
            continue
        file, _, frag = t.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        why = None
        if not os.path.exists(dest):
            why = "no such file"
        elif frag and not dest.endswith(".md"):
            why = "an anchor in a file that is not Markdown"
        elif frag and frag not in anchors(dest):
            why = "no heading with this anchor in " + dest
        if why:
            print("%s: %s: %s" % (path, t, why))
            bad += 1
sys.exit(1 if bad else 0)
EOF
}

# The checker itself: a broken file, a broken anchor and a duplicate
# heading's anchor are found; good links (also with a scheme, in code, to a
# heading with punctuation, to the second of two headings) pass.
mkdir -p "$T/d/sub"
cat >"$T/d/a.md" <<'EOF'
# Title

## Several tokens: `--key <uri>`, *proven*

## Again
## Again

Good: [x](sub/b.md), [y](sub/b.md#a-heading-with-a-link-1), [z](#again-1),
[w](#several-tokens---key-uri-proven), [split
text](#title), [h](https://example.com/none.md), `[c](nofile.md)`.

    [indented](nofile.md)

```
[fenced](nofile.md)
```
EOF
cat >"$T/d/sub/b.md" <<'EOF'
# A heading with a [link](../a.md)
# A heading with a link
EOF
if check_links "$T/d/a.md" "$T/d/sub/b.md" >"$T/out" 2>&1; then
	t_pass "the checker passes good links"
else
	t_fail "the checker passes good links" "$(cat "$T/out")"
fi
cat >"$T/d/bad.md" <<'EOF'
# Bad

A [missing file](sub/none.md), [a missing
anchor](sub/b.md#no-such-heading), [another](#again-2), [own](#bad-1).
EOF
check_links "$T/d/bad.md" >"$T/out" 2>&1
rc=$?
n=$(grep -c 'bad.md: ' "$T/out")
if [ "$rc" -eq 1 ] && [ "$n" -eq 4 ] && grep -q 'sub/none.md: no such file' "$T/out" &&
	grep -q 'sub/b.md#no-such-heading: no heading' "$T/out"; then
	t_pass "the checker finds a missing file and missing anchors"
else
	t_fail "the checker finds a missing file and missing anchors" "status $rc, $n found" \
		"$(cat "$T/out")"
fi

# The project's own documents.
cd "$TOP" || exit 1
# CI and newcomers start with the README's first two commands (its first
# indented code lines): they stay `scripts/demo` and `scripts/check`.
first=$(grep -m 2 '^    [^ ]' README.md | sed 's/^ *//' | tr '\n' ' ')
if [ "$first" = "scripts/demo scripts/check " ]; then
	t_pass "the README's first two commands are scripts/demo and scripts/check"
else
	t_fail "the README's first two commands are scripts/demo and scripts/check" "found: $first"
fi
for f in README.md doc/*.md; do
	[ -e "$f" ] || continue
	if check_links "$f" >"$T/out" 2>&1; then
		t_pass "links of $f resolve"
	else
		t_fail "links of $f resolve" "$(cat "$T/out")"
	fi
done

t_done
