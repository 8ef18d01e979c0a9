"""Generate cases.jsonl: what pydantic (2.13.4 / pydantic-core 2.46.4 when
written) and CPython's json module answer for many inputs, rendered as
FastAPI renders them (jsonable_encoder, then json.dumps with
ensure_ascii=False and compact separators). validate_test.go replays every
line against the Go package.

    python3 gen.py > cases.jsonl

FastAPI itself is not needed: its body handling is json.loads plus
validate_python(..., from_attributes=True), reproduced below.
"""
import base64
import datetime as dt
import decimal
import enum
import json
import random
import sys
from typing import Annotated, Optional

import pydantic
import pydantic_core
from pydantic import BaseModel, Field, HttpUrl, TypeAdapter


class IdType(str, enum.Enum):
    platform = "platform"
    core = "core"
    dbp = "dbp"


def unrenderable(s):
    # a str holding a lone surrogate cannot be encoded to UTF-8
    return any(0xD800 <= ord(c) <= 0xDFFF for c in s)


def enc(v):
    # fastapi.encoders.jsonable_encoder for the types that occur here. What
    # FastAPI cannot render (it answers 500) the sandbox renders as null
    # (decisions D17, D19): non-finite floats, a str holding a lone surrogate,
    # a dict with such a key, bytes that are not UTF-8.
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return None
    if isinstance(v, decimal.Decimal):
        return int(v) if v.as_tuple().exponent >= 0 else float(v)
    if isinstance(v, bytes):
        try:
            return v.decode()
        except UnicodeDecodeError:
            return None
    if isinstance(v, str) and unrenderable(v):
        return None
    if isinstance(v, enum.Enum):
        return v.value
    if isinstance(v, dict):
        if any(unrenderable(k) for k in v):
            return None
        return {k: enc(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [enc(x) for x in v]
    return v


def dumps(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def response(v):
    # Starlette encodes the rendered body to UTF-8; a lone surrogate makes
    # that fail and FastAPI answers 500.
    s = dumps(v)
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return "500"
    return s


def render(errs, prefix):
    out = []
    for e in errs:
        d = {"type": e["type"], "loc": list(prefix) + list(e["loc"]), "msg": e["msg"], "input": enc(e["input"])}
        if "ctx" in e:
            d["ctx"] = {k: enc(x) for k, x in e["ctx"].items()}
        out.append(d)
    return response(out)


def ok_value(v):
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return "ok:" + v.strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"
    if isinstance(v, decimal.Decimal):
        return "ok:" + str(v)
    if isinstance(v, enum.Enum):
        return "ok:" + v.value
    if isinstance(v, bool):
        return "ok:" + ("true" if v else "false")
    if isinstance(v, pydantic.AnyUrl):
        return "ok:" + str(v)
    if isinstance(v, dict):
        return "ok:" + response({k: str(x) for k, x in v.items()})
    if isinstance(v, list):
        return "ok:" + response(v)
    if isinstance(v, str):
        return "ok:" + "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in v)
    return "ok:" + str(v)


TYPES = {
    "int": int,
    "int_ge1_le100": Annotated[int, Field(ge=1, le=100)],
    "int_ge0": Annotated[int, Field(ge=0)],
    "bool": bool,
    "decimal": decimal.Decimal,
    "decimal_gt0": Annotated[decimal.Decimal, Field(gt=0)],
    "datetime": dt.datetime,
    "enum": IdType,
    "str": str,
    "url": HttpUrl,
    "strlist": list[str],
    "decimalmap": dict[str, decimal.Decimal],
}


class Sub(BaseModel):
    a: str


def probe_param(typ, s):
    ta = TypeAdapter(TYPES[typ])
    try:
        return ok_value(ta.validate_python(s))
    except pydantic.ValidationError as e:
        return render(e.errors(include_url=False), ("query", "p"))


def probe_field(typ, value):
    if typ == "model":
        class M(BaseModel):
            f: Sub
    else:
        class M(BaseModel):
            f: TYPES[typ]
    try:
        m = M.model_validate({"f": value}, from_attributes=True)
        v = m.f
        if isinstance(v, BaseModel):
            return "ok:" + dumps(v.model_dump())
        return ok_value(v)
    except pydantic.ValidationError as e:
        return render(e.errors(include_url=False), ("body",))


def probe_json(raw):
    try:
        v = json.loads(raw)
    except json.JSONDecodeError as e:
        return "json_invalid:" + e.msg
    except Exception:
        return "400"
    r = response(enc(v))
    return r if r == "500" else "value:" + r


def out(kind, typ, inp, want):
    sys.stdout.write(dumps({"kind": kind, "type": typ, "input": inp, "want": want}) + "\n")


def main():
    rnd = random.Random(20240101)

    # Query/path parameters: always strings.
    int_strs = ["1", "0", "101", "100", "25", "-1", "abc", "", " ", "2.5", "5.0", "5.", "5.00", "+5", "++5",
                "-0", "00", "007", "0_7", "1_000", "1__0", "_1", "1_", " 42 ", "\t7\n", "\u00a08\u2003", "0x10",
                "1e2", "99999999999999999999", "-99999999999999999999", "9223372036854775807",
                "9223372036854775808", "1" * 4300, "1" * 4301, "1" * 4301 + "x", "-" + "1" * 4300, "٣", "１",
                "+-1", "-+1", "--1", "-0-001", "0:", "00_", "42_.0", "+4_2.0", " _042.0 ", "123456789.0",
                "1.0e1", "NaN", "inf", "true", "0.0", "-1.0", "00.0", "4_2.00"]
    for _ in range(400):
        n = rnd.randint(0, 8)
        int_strs.append("".join(rnd.choice("0123456789+-_. \t0011a") for _ in range(n)))
    for s in int_strs:
        for typ in ("int_ge1_le100", "int_ge0", "int"):
            out("param", typ, s, probe_param(typ, s))

    bool_strs = ["true", "True", "TRUE", "false", "0", "1", "yes", "no", "on", "off", "t", "f", "y", "n",
                 "maybe", "", "2", " true", "tru", "ON", "1.0", "K"]
    for s in bool_strs:
        out("param", "bool", s, probe_param("bool", s))

    dt_strs = ["not a date", "2024-13-01", "2024-01-01T25:00:00", "2024-02-30T00:00:00Z", "",
               "2024-01-01 10:00", "2026-01-31", "2024-01-01T00:00:00Z", "2024-01-01T00:00:00z",
               "2024-01-01t00:00:00", "2024-01-01_00:00:00", "2024-01-01X00:00:00", "2024-01-01T",
               "2024-01-01T1", "2024-01-01T10:0", "2024-01-01T10:00:", "2024-01-01T10:00:6",
               "2024-01-01T10:00:60", "2024-01-01T10:60", "2024-01-01T24:00", "2024-01-01Ta0:00",
               "2024-01-01T10-00", "2024-01-01T10:00:00.", "2024-01-01T10:00:00.1",
               "2024-01-01T10:00:00.123456", "2024-01-01T10:00:00.1234567", "2024-01-01T10:00:00,5",
               "2024-01-01T10:00:00.12a", "2024-01-01T10:00:00+01:00", "2024-01-01T10:00:00+0100",
               "2024-01-01T10:00:00-05:30", "2024-01-01T10:00:00\u221205:30", "2024-01-01T10:00:00+1",
               "2024-01-01T10:00:00+01", "2024-01-01T10:00:00+01:", "2024-01-01T10:00:00+01:6",
               "2024-01-01T10:00:00+01:60", "2024-01-01T10:00:00+24:00", "2024-01-01T10:00:00+23:59",
               "2024-01-01T10:00:00 +01:00", "2024-01-01T10:00:00Zx", "2024-01-01T10:00:00x",
               "2024-1-01", "2024/01/01", "202a-01-01", "2024-0a-01", "2024-01-0a", "2024-00-01",
               "2024-02-29", "2023-02-29", "1900-02-29", "2000-02-29", "0000-01-01", "0000-01-01T00:00:00",
               "9999-12-31T23:59:59.999999", "1600-01-01", "1970-01-01", "0", "1", "-1", "1700000000",
               "1700000000.5", "1700000000.123456789", "20000000000", "20000000001", "-20000000001",
               "1700000000000", "1700000000123", "253402300799", "253402300800", "253402300799000",
               "253402300800000", "-62167219200", "-62167219201", "-62167219200000", "+1700000000",
               "1.5", ".5", "5.", "1e9", "99999999999999999999", "1700000000.", "-0.5", "86400",
               "2024-01-01T10:00:00.000000Z", "2024-01-01 10:00:00.5+05", "  2024-01-01", "2024-01-01 ",
               "2024-01-01T10:00Z", "2024-01-01T10:00+01:00", "2024-01-01T10", "10:00", "2024-01-01T10:00:00ZZ",
               "2024-12-31T23:59:59-23:59", "2024-01-01T10:00:00+00:00", "１９７０-01-01"]
    # random datetimes around interesting shapes
    for _ in range(300):
        y = rnd.choice(["2024", "1999", "0000", "9999", "20x4", "1600"])
        m = rnd.choice(["01", "12", "13", "00", "02", "1a"])
        d = rnd.choice(["01", "28", "29", "30", "31", "32", "00"])
        sep = rnd.choice(["T", " ", "_", "t", "", "x"])
        tm = rnd.choice(["", "00:00", "23:59:59", "24:00", "12:60", "12:30:61", "12:30:30.5", "1:00", "12:3"])
        tz = rnd.choice(["", "Z", "+01:00", "-0130", "+25:00", "+01:75", "Q", "+1"])
        s = f"{y}-{m}-{d}{sep}{tm}{tz}"
        dt_strs.append(s)
    for _ in range(100):
        dt_strs.append(str(rnd.choice([rnd.randint(-10**14, 10**14), rnd.uniform(-3e10, 3e10)])))
    for _ in range(300):
        base = bytearray(rnd.choice(["2024-02-29T23:59:59.999999+05:30", "1999-12-31 00:00", "2024-01-01",
                                     "1700000000.25", "-1700000000"]), "utf-8")
        for _ in range(rnd.randint(1, 3)):
            pos = rnd.randrange(len(base) + 1)
            op = rnd.random()
            if op < 0.4 and base:
                del base[min(pos, len(base) - 1)]
            elif op < 0.8:
                base.insert(pos, ord(rnd.choice("0123456789-:T Z+.,ez_")))
            else:
                base[min(pos, len(base) - 1) if base else 0:] = base[min(pos, len(base) - 1) if base else 0:][:1]
        dt_strs.append(base.decode("utf-8", "replace"))
    for s in dt_strs:
        out("param", "datetime", s, probe_param("datetime", s))

    enum_strs = ["platform", "core", "dbp", "Platform", "", "x", "platform ", "'", '"', "a'b\"c"]
    for s in enum_strs:
        out("param", "enum", s, probe_param("enum", s))

    dec_strs = ["1", "1.5", "-1.50", "abc", "", " 2.5 ", "1_000.5", "1__0", "_1", "1_", "1e3", "1E-3", ".5", "5.",
                ".", "e5", "1e", "Infinity", "-inf", "NaN", "nan5", "sNaN", "0", "-0", "+7", "١٢٣", "1,5", "0x10",
                "1.2.3", "00012.3400", "1e400000", "  ", "\u00a012\u00a0", "12 3"]
    for _ in range(300):
        n = rnd.randint(0, 8)
        dec_strs.append("".join(rnd.choice("0123456789+-_.eE \tinfINFaNs0011") for _ in range(n)))
    for s in dec_strs:
        for typ in ("decimal", "decimal_gt0"):
            out("param", typ, s, probe_param(typ, s))

    # Body fields: JSON values.
    json_vals = ["1", "0", "-1", "1.0", "1.5", "-0.0", "1e2", "1E400", "-1e400", "NaN", "Infinity", "true", "false",
                 "null", '"5"', '"abc"', '"2.5"', '" 7 "', "[]", "{}", "[1]", '{"a":1}', "123456789012345678901234567890",
                 "1e20", "9.3e18", "-9.3e18", "9.2e18", '"true"', '"yes"', '"2024-01-01"', '"2024-01-01T10:00:00+02:00"',
                 "1700000000", "1700000000.5", "1e11", "1e14", "1e300", "-1e300", "2", "0.5", "1.0e0",
                 '"platform"', '"https://example.com"', '["a","b"]', '["a",1,null]', '{"a":"x"}', '{"a":1}',
                 '{"a":"1.5","b":"x"}', '{"a":"1.5","b":"2"}', '"\\ud800"', '"é"', '"\\u2028"']
    for v in json_vals:
        for typ in ("int", "int_ge1_le100", "bool", "decimal", "datetime", "enum", "str", "url", "strlist",
                    "decimalmap", "model"):
            out("field", typ, v, probe_field(typ, json.loads(v)))

    url_strs = ["https://example.com", "http://example.com/a/b?c=d#e", "ftp://example.com", "mailto:x@y.z", "",
                "not a url", "example.com", "/relative", "http://", "http:///", "https://example com",
                "http://exam%ple.com", "http:// /", "https://xn---", "http://example.com:65536",
                "http://example.com:65535", "http://example.com:abc", "http://example.com:8080x", "http://1...1",
                "http://1.2.3.256", "http://0x7f.1", "http://127.1", "http://4294967296", "http://[::1]",
                "http://[::1", "https://[2001:db8::1]:8443/x", "http://[1::2::3]", "http://[::ffff:1.2.3.4]",
                "http://[::1.2.3]", "http://user:pass@host/", "http://@host", "http://@/x", "http://user@",
                "http://a:b@", "HTTP://EXAMPLE.COM", "  https://x.org  ", "https://x\n.org", "https://\u00e9.com",
                "https://münchen.de/", "https://ＥＸＡＭＰＬＥ.com", "http://ex\u00adample.com", "http://a..b",
                "http://a.b.", "http:example.com", "http:\\\\example.com\\path", "javascript:alert(1)",
                "ws://x", "file:///etc/passwd", "file://:80", "foo://:80", "foo://a b", "foo://[x]", "1http://x",
                "ht tp://x", "http://x/" + "a" * 2075, "http://x/" + "a" * 2076, "http://%41.com", "http://%zz.com",
                "http://a<b.com", "http://a^b", "http://a|b", "http://a%b", "http://-", "http://_", "http://x:0",
                "https://x:443", "http://x:/", "http://x?q=1 2", "http://x#f g", "http://x/%zz", "http://x/../..",
                "http://0x100000000", "http://0300.0250.1.1", "http://1.2.3.4.5", "http://1.2.3.4.", "http://.",
                "http://..", "http://x.1", "http://1.x", "http://09", "http://0x", "http://\u3002", "http://a\u3002b",
                "https://xn--mnchen-3ya.de", "https://xn--abc.com", "https://xn--a.com", "http://[:1]",
                "http://[1:2:3:4:5:6:7:8:9]", "http://[::1]:", "http://[::1]x", "https://twitter.com/@handle",
                "http://a@b@c", "http://\u0000x", "http://x\u0000", "\u0000http://x", "http://x:\u0661"]
    for _ in range(600):
        base = list(rnd.choice(["https://user:pw@example.com:8443/a/b?c=d#e", "http://127.0.0.1/x", "http://[::1]:80/",
                                "https://münchen.de/ä", "ftp://x/y", "http://a.b.c/"]))
        for _ in range(rnd.randint(1, 3)):
            pos = rnd.randrange(len(base) + 1)
            op = rnd.random()
            if op < 0.4 and base:
                del base[min(pos, len(base) - 1)]
            else:
                base.insert(pos, rnd.choice(":/\\?#@[]%.-_ xX0a9\t\nÄ€%2e%41"))
        url_strs.append("".join(base))
    for s in url_strs:
        out("param", "url", s, probe_param("url", s))

    # JSON documents.
    docs = [b"", b" ", b"{", b"}", b"[", b"]", b"{}", b"[]", b"null", b"true", b"nul", b"tru", b"fals", b"NaN", b"-NaN",
            b"Infinity", b"-Infinity", b"-Inf", b"1", b"-", b"-0", b"01", b"1.", b"1.5", b".5", b"1e", b"1e5", b"1E+5",
            b"1e-", b"1.5e-3", b"1e400", b"-1e400", b"123456789012345678901234567890",
            b"[1,2", b"[1 2]", b"[1,]", b'{"a"}', b'{"a":}', b'{"a":1,}', b'{"a":1 "b":2}', b"{'a':1}", b'{a:1}',
            b'{"a":1}x', b'{"a":1} ', b' \t\n\r{"a":1}\r\n', b'\x0c{}', b'"abc', b'"a\nb"', b'"a\\x"', b'"a\\u12"',
            b'"a\\u12g4"', b'"\\ud83d\\ude00"', b'"\\ud83d"', b'"\\ud83d\\u0041"', b'"\\ud83d\\uzzzz"', b'"\\',
            b'"\\"', b'"\\u0041', b'"\\u0041"', b'"\\ud83d\\ude00', b'{"a":1,"a":2,"b":3}', b'{"b":1,"a":2,"b":3}',
            b'[1.0,1e16,1e15,1e-5,0.0001,-0.0,0.1,123456789.123456789,1e22,5e-324,1.7976931348623157e308]',
            b'["<>&\\u2028\\u2029\\u007f\\u0000\\u001f\\t\\b\\f"]', b'\xef\xbb\xbf{}', b'\xef\xbb\xbf\xef\xbb\xbf{}',
            b'\xff\xfe{\x00}\x00', b'\xfe\xff\x00{\x00}', b'{\x00}\x00', b'\x00{\x00}', b'{\x00\x00\x00}\x00\x00\x00',
            b'\x00\x00\x00{\x00\x00\x00}', b'\xff\xfe\x00\x00{\x00\x00\x00}\x00\x00\x00', b'\x80', b'"\xc3\xa9"',
            b'"\xed\xa0\x80"', b'"\xed\xbf\xbf"', b'"\xf4\x90\x80\x80"', b'"\xc0\xaf"', b'{\x00', b'1\x00',
            b'[' * 50 + b']' * 50, b'{"a":[1,{"b":null}],"c":"\xe2\x82\xac"}', b'[1' + b'0' * 4300 + b']',
            b'[1' + b'0' * 4299 + b']', b'-1' + b'0' * 4299, b'[1' + b'0' * 4300 + b', x]', b'[x, 1' + b'0' * 4300 + b']',
            b'"\x1f"', b'"\x7f"', b'\xa0{}', b'{"a" :1 , "b" : [ ] }', b'[-]', b'[-a]', b'[1e]', b'[1.e5]',
            b'[1.5e]', b'{"a":1,,}', b'[,]', b'[1,,2]', b'{,}', b'{"a":1,"b"}', b'"\t"', b'"abc"def', b'1 2',
            b'{"\\ud800":1}', b'{"k":"v"', b'{"k" "v"}', b'{"k":"v",', b'{"k":"v", ', b'[1, ', b'[1 ', b'truex',
            b'true false', b'{"a":NaN,"b":-Infinity}', b'"\\/"', b'12345678901234567890.5',
            b'"\x00\x00\xd8"\x00', b'"\x00\x00\xd8', b'\xff\xfe"\x00\x00\xd8"\x00', b'\xff\xfe"\x00',
            b'"\x00\x00\x00\x00\xd8\x00\x00"\x00\x00\x00', b'"\x00\x00\x00\x00\x00\x11\x00"\x00\x00\x00',
            b'[\x00]\x00x', b'\x00[\x00]', b'"\x00=\xd8\x00\xde"\x00', b'\xfe\xff\x00"\xd8=\xde\x00\x00"']
    for _ in range(400):
        base = rnd.choice([b'{"a":[1,2.5,"x\\n"],"b":{"c":null,"d":true}}', b'[{"k":"v"},-1e-3,"\\u00e9"]'])
        bs = bytearray(base)
        for _ in range(rnd.randint(1, 3)):
            op = rnd.random()
            pos = rnd.randrange(len(bs) + 1)
            if op < 0.4 and len(bs) > 0:
                del bs[min(pos, len(bs) - 1)]
            elif op < 0.8:
                bs.insert(pos, rnd.choice(b'{}[]",:\\ \n\tx01.eE-+nutl\x00\x1f'))
            else:
                bs = bs[:pos]
        docs.append(bytes(bs))
    for d in docs:
        out("json", "", base64.b64encode(d).decode(), probe_json(d))


main()
