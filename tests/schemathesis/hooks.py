"""The site's OpenAPI formats, as strategies the fuzzer draws from.

The document names two formats whose rules JSON Schema cannot spell:
`identifier` (1 to 64 printable characters in Unicode NFKC form, no
markup, no invisible, private-use, noncharacter or unassigned code point:
the site's `ident` module) and `host-port` (a printer's raw port). These
strategies draw values the site takes, so the positive tests reach the
handlers' logic; the negative tests still send what breaks the
documented type and length bounds.
"""

from hypothesis import strategies as st

import schemathesis

# Letters, digits and the punctuation real codes and labels carry, with a
# few composed (NFKC) letters so a code need not be ASCII.
IDENTIFIER_ALPHABET = (
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./:#"
    "ÄÖÜäöüéÉØøÅåŁłŽž"
)

schemathesis.openapi.format(
    "identifier",
    st.text(alphabet=IDENTIFIER_ALPHABET, min_size=1, max_size=64),
)

# Loopback only: a printer added during the run is polled at its address.
schemathesis.openapi.format(
    "host-port",
    st.integers(min_value=1, max_value=65535).map(lambda port: f"127.0.0.1:{port}"),
)
