"""Cases for the string ops (src/ops/strings.cpp, string_match.cpp, label_encoder.cpp), computed
with Python's own str methods, re and numpy's float formatting, independently of kiln."""
import re

import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(47)
cases = []
S = lambda *xs: np.array(xs, object)   # noqa: E731


def words(shape, alphabet="abcAB .-", most=6):
    out = np.empty(int(np.prod(shape)), object)
    for i in range(out.size):
        out[i] = "".join(r.choice(list(alphabet), r.integers(0, most + 1)))
    return out.reshape(shape)


# Cast to string: numpy's shortest digits for the value's own type, written as Python writes
# floats (plain for exponents -4..15, else scientific); NaN and the infinities as ONNX names them.
def py_float(x):
    if np.isnan(x):
        return "NaN"
    if np.isinf(x):
        return "INF" if x > 0 else "-INF"
    if x == 0:
        return "-0.0" if np.signbit(x) else "0.0"
    sci = np.format_float_scientific(abs(x), unique=True, exp_digits=1)   # "1.5e-7", "1.e+16"
    mant, exp = sci.split("e")
    digits, exp = mant.replace(".", "").rstrip("0") or "0", int(exp)
    sign = "-" if x < 0 else ""
    if -4 <= exp < 16:
        if exp < 0:
            return sign + "0." + "0" * (-exp - 1) + digits
        whole = exp + 1
        if len(digits) <= whole:
            return sign + digits + "0" * (whole - len(digits)) + ".0"
        return sign + digits[:whole] + "." + digits[whole:]
    return sign + digits[0] + ("." + digits[1:] if len(digits) > 1 else "") + f"e{'-' if exp < 0 else '+'}{abs(exp):02d}"


special = [0.1, 1e16, 1e-5, 1e-4, 123456789.0, -0.0, np.nan, np.inf, -np.inf, 1.5e-7, 3.4028235e38, 1000.0, 65504.0]
for t, top in [(np.float32, 8), (np.float64, 8), (np.float16, 4)]:
    sp = [v for v in special if t != np.float16 or abs(v) <= 65504 or not np.isfinite(v)]
    x = np.concatenate([np.array(sp, t), (r.standard_normal(24 - len(sp)) * 10.0 ** r.integers(-6, top, 24 - len(sp))).astype(t)])
    name = np.dtype(t).name
    cases.append(case(f"cast_{name}_to_string", "string_convert", [tensor(x.reshape(4, 6))],
                      [tensor(np.array([py_float(v) for v in x], object).reshape(4, 6))], dict(target_type="string")))
# (uint64 above int64's range does not survive the case files' JSON; string_tensor_test.cpp has it.)
for t in [np.int8, np.int64, np.uint64, np.int32]:
    info = np.iinfo(t)
    top = min(int(info.max), 2**63 - 1)
    x = np.concatenate([np.array([info.min, top, 0], t), r.integers(info.min // 2, top // 2, 5, dtype=t)])
    cases.append(case(f"cast_{np.dtype(t).name}_to_string", "string_convert", [tensor(x)],
                      [tensor(np.array([str(int(v)) for v in x], object))], dict(target_type="string")))
cases.append(case("cast_bool_to_string", "string_convert", [tensor(np.array([True, False, True]))],
                  [tensor(S("True", "False", "True"))], dict(target_type="string")))

# Cast from string: plain and scientific numbers with spaces and signs, INF and NaN in any case.
texts = S("1.5", " -2.5e2 ", "INF", "+inf", "-Infinity", "nan", "NaN", "1E8", "1e400", "-1e-400", "3.14159", "+7")
vals = [float(s.strip()) for s in texts]
for t in [np.float32, np.float64, np.float16]:
    cases.append(case(f"cast_string_to_{np.dtype(t).name}", "string_convert", [tensor(texts.reshape(3, 4))],
                      [tensor(np.array(vals, t).reshape(3, 4))], dict(target_type=np.dtype(t).name)))
ints = S("42", " -7", "+13", "100.5", "-100.9", "0", "127")
cases.append(case("cast_string_to_int64", "string_convert", [tensor(ints)],
                  [tensor(np.array([42, -7, 13, 100, -100, 0, 127], np.int64))], dict(target_type="int64")))
cases.append(case("cast_string_to_int8_wraps", "string_convert", [tensor(S("127", "128", "-129", "300"))],
                  [tensor(np.array([127, -128, 127, 44], np.int8))], dict(target_type="int8")))
cases.append(case("cast_string_to_uint64", "string_convert", [tensor(S("9223372036854775807", "9007199254740993"))],
                  [tensor(np.array([2**63 - 1, 2**53 + 1], np.uint64))], dict(target_type="uint64")))
cases.append(case("cast_string_to_bool", "string_convert", [tensor(S("True", "false", "0", "2.5", "0.0", "TRUE"))],
                  [tensor(np.array([1, 0, 0, 1, 0, 1], bool))], dict(target_type="bool")))
cases.append(error_case("cast_not_a_number", "string_convert", [tensor(S("1.5", "one"))], 'cannot read "one" as a number',
                        dict(target_type="float32")))
cases.append(error_case("cast_number_to_number", "string_convert", [shape_only("float32", [2])], "one side must be a string",
                        dict(target_type="int32")))

# StringConcat and Equal on strings, with broadcasting and UTF-8.
a, b = words((3, 4)), words((4,))
cases.append(case("concat_broadcast", "string_concat", [tensor(a), tensor(b)], [tensor(np.char.add(a.astype(str), b.astype(str)).astype(object))]))
u1, u2 = S("café", "日本", "", "ü"), S("!", "語", "x", "")
cases.append(case("concat_utf8", "string_concat", [tensor(u1), tensor(u2)], [tensor(np.array([p + q for p, q in zip(u1, u2)], object))]))
cases.append(case("concat_scalar", "string_concat", [tensor(np.array("a", object)), tensor(S("b", "c"))], [tensor(S("ab", "ac"))]))
a, b = words((2, 3, 4), "ab", 2), words((3, 1), "ab", 2)
cases.append(case("equal_broadcast", "string_equal", [tensor(a), tensor(b)], [tensor(a == b)]))
cases.append(error_case("equal_numbers", "string_equal", [shape_only("float32", [2]), shape_only("string", [2])],
                        "expected a string tensor"))


# StringSplit: Python's str.split, padded with "" to the longest split.
def split_case(name, x, delimiter=None, maxsplit=None):
    pieces = [s.split(delimiter or None, -1 if maxsplit is None else maxsplit) for s in x.reshape(-1)]
    most = max([len(p) for p in pieces], default=0)
    y = np.array([p + [""] * (most - len(p)) for p in pieces], object).reshape(x.shape + (most,))
    z = np.array([len(p) for p in pieces], np.int64).reshape(x.shape)
    attrs = {}
    if delimiter is not None:
        attrs["delimiter"] = delimiter
    if maxsplit is not None:
        attrs["maxsplit"] = maxsplit
    cases.append(case(name, "string_split", [tensor(x)], [tensor(y), tensor(z)], attrs))


split_case("split_dot", S("abc.com", "a..b", ".", ""), ".")
split_case("split_multichar", S("a--b--c", "--", "a-b"), "--")
split_case("split_whitespace", S("  hello   world ! ", "", "   ", "a\tb\nc"))
split_case("split_whitespace_maxsplit", S(" a b  c  ", "x y", "  "), None, 1)
split_case("split_delimiter_maxsplit", words((2, 3), "a.b", 8), ".", 2)
split_case("split_random", words((3, 4)), " ")
split_case("split_empty_tensor", np.empty((0,), object), ",")


# StringNormalizer: stopwords removed whole (case-insensitively unless asked), then the case.
def normalize(name, x, action="NONE", sensitive=False, stopwords=()):
    fold = (lambda s: s) if sensitive else str.lower
    stops = {fold(w) for w in stopwords}
    kept = [s for s in x.reshape(-1) if fold(s) not in stops]
    kept = [s.upper() if action == "UPPER" else s.lower() if action == "LOWER" else s for s in kept] or [""]
    y = np.array(kept, object).reshape((1, -1) if x.ndim == 2 else (-1,))
    attrs = dict(case_change_action=action, is_case_sensitive=sensitive, stopwords=list(stopwords))
    cases.append(case(name, "string_normalizer", [tensor(x)], [tensor(y)], attrs))


days = S("Monday", "tuesday", "MONDAY", "Wednesday", "monday")
normalize("normalizer_insensitive_lower", days, "LOWER", False, ["monday"])
normalize("normalizer_sensitive_upper", days, "UPPER", True, ["monday"])
normalize("normalizer_none_2d", days.reshape(1, 5), "NONE", False, ["wednesday", "MonDay"])
normalize("normalizer_all_removed", S("a", "A"), "UPPER", False, ["a"])
normalize("normalizer_all_removed_2d", S("a", "A").reshape(1, 2), "LOWER", False, ["a"])
normalize("normalizer_utf8_upper", S("ça va", "élan", "αβγ", "привет", "日本"), "UPPER")
normalize("normalizer_utf8_lower", S("ÇA VA", "ÉLAN", "ΑΒΓ", "ПРИВЕТ"), "LOWER", False, ["élan"])
normalize("normalizer_random", words((1, 8)), "LOWER", False, ["ab", "a"])
cases.append(error_case("normalizer_3d", "string_normalizer", [shape_only("string", [1, 2, 2])], "expected [C] or [1, C]"))
cases.append(error_case("normalizer_bad_action", "string_normalizer", [shape_only("string", [2])], "case_change_action='TITLE'",
                        dict(case_change_action="TITLE")))


# RegexFullMatch: Python's re.fullmatch agrees with ECMAScript on these patterns.
def regex(name, x, pattern):
    y = np.array([re.fullmatch(pattern, s) is not None for s in x.reshape(-1)]).reshape(x.shape)
    cases.append(case(name, "regex_full_match", [tensor(x)], [tensor(y)], dict(pattern=pattern)))


regex("regex_domains", S("www.google.com", "www.bbc.co.uk", "www.x-y.com", "ftp.a.com"), r"www\.[\w.-]+\.\bcom\b")
regex("regex_email_2d", S("account@gmail.com", "a@hotmail.com", "not email", "b2@yahoo.com").reshape(2, 2),
      r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)")
regex("regex_random", words((3, 5), "ab-", 5), r"(a|b)+-?[ab]*")
regex("regex_anchors_classes", S("abc123", "ABC", "", "a1", "  "), r"[a-z]*\d*|\s+")
# The longest strings taken: nested groups recurse deeply in std::regex (its own 64 MB stack).
long_ab = "".join(r.choice(["a", "b"], 10000))
regex("regex_longest_input", S(long_ab, long_ab[:9999], long_ab[:9999] + "c"), r"((a|b)(a|b))*")
cases.append(error_case("regex_too_long", "regex_full_match", [tensor(S("a" * 10001))], "takes strings of at most 10000",
                        dict(pattern="a*")))
cases.append(error_case("regex_re2_flags", "regex_full_match", [shape_only("string", [2])], "RE2's (?i",
                        dict(pattern="(?i)abc")))
cases.append(error_case("regex_re2_unicode_class", "regex_full_match", [shape_only("string", [2])], "RE2's \\p",
                        dict(pattern=r"\p{L}+")))
cases.append(error_case("regex_invalid", "regex_full_match", [shape_only("string", [2])], "not a valid regular expression",
                        dict(pattern="a(b")))


# LabelEncoder: a dictionary lookup with a default.
def encode(name, x, keys, values, default, key_type, value_type, out_dtype):
    table = {}
    for k, v in zip(keys, values):
        table.setdefault(("nan" if isinstance(k, float) and np.isnan(k) else k), v)
    look = lambda k: table.get("nan" if isinstance(k, float) and np.isnan(k) else k, default)   # noqa: E731
    y = np.array([look(k.item() if hasattr(k, "item") else k) for k in x.reshape(-1)], out_dtype).reshape(x.shape)
    cases.append(case(name, "label_encoder", [tensor(x)], [tensor(y)],
                      dict(key_type=key_type, value_type=value_type, keys=list(keys), values=list(values),
                           default_value=default)))


encode("encoder_string_int64", S("a", "b", "d", "c", "g", "a"), ["a", "b", "c"], [0, 1, 2], 42, "string", "int64", np.int64)
encode("encoder_int64_string", np.array([[3, -1], [7, 3]], np.int64), [3, 7], ["three", "seven"], "_Unused", "int64",
       "string", object)
# (A NaN key, which JSON cannot hold, is tested in tests/core/string_tensor_test.cpp.)
encode("encoder_float_float", np.array([0.5, 1.25, -0.0, 2.0], np.float32), [0.5, 1.25, 0.0], [1.5, 9.0, 4.0],
       -0.0, "float32", "float32", np.float32)
encode("encoder_string_string", words((2, 4), "ab", 2), ["a", "b", "ab", ""], ["x", "y", "xy", "empty"], "?", "string",
       "string", object)
encode("encoder_int32_float64", np.array([1, 2, 3], np.int32), [2, 3], [0.25, -1e300], 7.0, "int32", "float64", np.float64)
encode("encoder_string_int16", S("p", "q", "r"), ["q"], [-300], -1, "string", "int16", np.int16)
cases.append(error_case("encoder_wrong_input", "label_encoder", [shape_only("int64", [2])], "the keys are string_type",
                        dict(key_type="string", value_type="int64", keys=["a"], values=[1], default_value=-1)))
cases.append(error_case("encoder_counts", "label_encoder", [shape_only("string", [2])], "2 keys for 1 values",
                        dict(key_type="string", value_type="int64", keys=["a", "b"], values=[1], default_value=-1)))
cases.append(error_case("encoder_value_kind", "label_encoder", [shape_only("string", [2])], "not a int64_type value",
                        dict(key_type="string", value_type="int64", keys=["a"], values=["x"], default_value=-1)))

# Numeric ops refuse strings when the program is built.
cases.append(error_case("add_refuses_strings", "add", [shape_only("string", [2]), shape_only("string", [2])],
                        "input 0 is a string tensor"))
write("strings", cases)
