"""Writes golden.json: NLTK 3.8 and langdetect 1.0.9 outputs on every IFEval prompt and GPT-4 response.

Run with Debian's packages (apt-get install python3-nltk python3-langdetect), from the repository root:
    /usr/bin/python3 test/unit/evals/ifeval/text/golden/make-golden.py
The Punkt model is built from ../shared/nltk/punkt_english (the same plain-text parameters the TypeScript port reads);
langdetect loads its profiles sorted by file name (the order the port uses) with DetectorFactory.seed = 0.
"""
import hashlib
import json
import os
from collections import defaultdict

import langdetect.detector_factory as ldf
import nltk
from langdetect import DetectorFactory, detect_langs
from nltk.tokenize.destructive import NLTKWordTokenizer
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, '..', '..', '..', '..', '..', '..', '..', 'shared')
PUNKT = os.path.join(SHARED, 'nltk', 'punkt_english')


def lines(name):
    with open(os.path.join(PUNKT, name), encoding='utf-8', newline='') as f:
        out = f.read().split('\n')
    while out and out[-1] == '':
        out.pop()
    return out


params = PunktParameters()
params.abbrev_types = set(lines('abbrev_types.txt'))
params.collocations = set(tuple(l.split('\t')) for l in lines('collocations.tab'))
params.sent_starters = set(lines('sent_starters.txt'))
params.ortho_context = defaultdict(int)
for l in lines('ortho_context.tab'):
    word, flags = l.rsplit('\t', 1)
    params.ortho_context[word] = int(flags)
punkt = PunktSentenceTokenizer(params)
treebank = NLTKWordTokenizer()

DetectorFactory.seed = 0
factory = DetectorFactory()
names = sorted(os.listdir(ldf.PROFILES_DIRECTORY))
factory.load_json_profile([open(os.path.join(ldf.PROFILES_DIRECTORY, n), encoding='utf-8').read() for n in names])
ldf._factory = factory


def digest(items):
    return hashlib.sha256('\u0000'.join(items).encode('utf-8')).hexdigest()[:16]


def row(name, text):
    sents = punkt.tokenize(text)
    words = [w for s in sents for w in treebank.tokenize(s)]
    try:
        lang = [[l.lang, l.prob] for l in detect_langs(text)]
    except Exception as e:  # LangDetectException
        lang = 'LangDetectException: ' + str(e)
    return {'id': name, 'sentences': len(sents), 'sentSha': digest(sents), 'words': len(words), 'wordSha': digest(words), 'lang': lang}


rows = []
with open(os.path.join(SHARED, 'ifeval', 'input_data.jsonl'), encoding='utf-8') as f:
    for line in f:
        r = json.loads(line)
        rows.append(row('prompt:%d' % r['key'], r['prompt']))
with open(os.path.join(SHARED, 'ifeval', 'parity', 'gpt4_responses.jsonl'), encoding='utf-8') as f:
    for i, line in enumerate(f):
        r = json.loads(line)
        if isinstance(r.get('response'), str):
            rows.append(row('response:%d' % i, r['response']))
out = {
    'generatedWith': 'nltk %s, langdetect 1.0.9 (Debian bookworm python3-nltk 3.8-1, python3-langdetect 1.0.9-1)' % nltk.__version__,
    'digest': 'first 16 hex digits of sha256 over the items joined by U+0000',
    'rows': rows,
}
with open(os.path.join(HERE, 'golden.json.tmp'), 'w', encoding='utf-8') as f:
    head = {k: v for k, v in out.items() if k != 'rows'}
    f.write(json.dumps(head, ensure_ascii=False)[:-1] + ', "rows": [\n')
    f.write(',\n'.join(json.dumps(r, ensure_ascii=False) for r in rows))
    f.write('\n]}\n')
os.replace(os.path.join(HERE, 'golden.json.tmp'), os.path.join(HERE, 'golden.json'))
print('wrote', len(rows), 'rows')
