#!/usr/bin/env python3
"""check_doc_links.py — every relative Markdown link in README.md, docs/*.md, docs/gpu, docs/predict,
bench and configs READMEs names a file that exists (and, for a .md target with #anchor, a heading
that makes that anchor). Run from the repository root; exit 1 listing the broken links."""
# (links inside fenced code blocks are skipped)
import glob, os, re, sys


def anchors(path):
    out=set()
    for line in open(path,encoding='utf-8'):
        m=re.match(r'^(#+)\s+(.*)',line)
        if m:
            t=m.group(2).strip().lower()
            t=re.sub(r'[^\w\- ]','',t)   # drop punctuation (github-like)
            out.add(t.replace(' ','-'))
    return out
bad=0
files=['README.md']+sorted(glob.glob('docs/*.md'))+['docs/gpu/README.md','docs/predict/README.md','bench/README.md','configs/README.md']
incode=False
for f in files:
    text=open(f,encoding='utf-8').read()
    # strip fenced code
    text=re.sub(r'```.*?```','',text,flags=re.S)
    for m in re.finditer(r'\]\(([^)\s]+)\)',text):
        tgt=m.group(1)
        if re.match(r'https?:|mailto:',tgt): continue
        path,_,anc=tgt.partition('#')
        full=os.path.normpath(os.path.join(os.path.dirname(f),path)) if path else f
        if not os.path.exists(full):
            print(f'{f}: missing {tgt}'); bad+=1; continue
        if anc and full.endswith('.md') and anc not in anchors(full):
            print(f'{f}: no anchor {tgt}'); bad+=1
print('bad links:',bad); sys.exit(1 if bad else 0)
