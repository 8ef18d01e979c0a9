"""Generate pydantic.jsonl: what pydantic's HttpUrl (2.13.4 / pydantic-core
2.46.4 when written: rust-url with the idna crate) answers for every host of
Unicode's IdnaTestV2.txt (as https://HOST/) and for every absolute http(s)
input of the URL standard's urltestdata.json. url_test.go replays each line
against the Go package.

    python3 gen.py > pydantic.jsonl
    python3 gen.py codepoints > codepoints.txt

codepoints.txt is pydantic's verdict on https://C/ for every code point C from
U+0080 (surrogates aside): runs "first last verdict" (hex, verdict ok, or the
url_parsing error), then the SHA-256 of the lines "cp host" (hex code point,
str host) of the accepted ones outside CJK Extension I (U+2EBF0..U+2EE5D,
new in Unicode 15.1, which x/net/idna's 15.0 tables do not hold), so that a
change of any mapping shows.

Each line is {"src": "idna"|"wpt", "input": URL, "want": W} where W is
"ok:" + str(url), or "err:" + type + ":" + the message pydantic gives.
Inputs holding a lone surrogate are left out (JSON cannot carry them to Go
unchanged); so are inputs a JSON body cannot hold apart from them.
"""
import hashlib
import json
import re
import sys

import pydantic
from pydantic import HttpUrl, TypeAdapter

ta = TypeAdapter(HttpUrl)


def answer(s):
    try:
        return "ok:" + str(ta.validate_python(s))
    except pydantic.ValidationError as e:
        err = e.errors(include_url=False)[0]
        return "err:" + err["type"] + ":" + err["msg"]


def unescape(s):
    s = re.sub(r"\\x\{([0-9A-Fa-f]+)\}", lambda m: chr(int(m.group(1), 16)), s)
    return re.sub(r"\\u([0-9A-Fa-f]{4})", lambda m: chr(int(m.group(1), 16)), s)


def has_surrogate(s):
    return any(0xD800 <= ord(c) <= 0xDFFF for c in s)


def emit(src, url):
    if has_surrogate(url):
        return
    print(json.dumps({"src": src, "input": url, "want": answer(url)}, ensure_ascii=False))


def main():
    seen = set()
    with open("IdnaTestV2.txt", encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            source = unescape(line.split(";")[0].strip())
            if source == '""':
                source = ""
            url = "https://" + source + "/"
            if url not in seen:
                seen.add(url)
                emit("idna", url)
    with open("urltestdata.json", encoding="utf-8") as f:
        for case in json.load(f):
            if not isinstance(case, dict):
                continue
            s = case["input"]
            if re.match(r"^[\x00-\x20]*https?://", s, re.I) and s not in seen:
                seen.add(s)
                emit("wpt", s)


def codepoints():
    runs, digest = [], hashlib.sha256()
    for cp in range(0x80, 0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        try:
            host = ta.validate_python("https://" + chr(cp) + "/").host
            verdict = "ok"
            if not 0x2EBF0 <= cp <= 0x2EE5D:
                digest.update(("%x %s\n" % (cp, host)).encode())
        except pydantic.ValidationError as e:
            verdict = e.errors(include_url=False)[0]["ctx"]["error"]
        if runs and runs[-1][2] == verdict and runs[-1][1] == cp - 1:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp, verdict])
    for first, last, verdict in runs:
        print("%x %x %s" % (first, last, verdict))
    print("sha256 " + digest.hexdigest())


if __name__ == "__main__":
    if sys.argv[1:] == ["codepoints"]:
        sys.exit(codepoints())
    sys.exit(main())
