#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets: real-world response shapes,
written by hand from RFC 9112 / RFC 9113 and what nginx sends.

    python3 fuzz/seeds/make_seeds.py     # rewrites fuzz/seeds/{response_h1,h2_client,h3_response,chunked_check}/

The response_h1/nginx_* seeds are not written here: they were captured from
nginx 1.22 on 127.0.0.1 (GET, HEAD, 404, gzip (chunked), a pipelined pair,
400 on garbage, 405 on POST), with the same two-byte prefix.

h2_client inputs are: one byte, the size of each read (0: all at once),
then the server's bytes after its preface.

h3_response and chunked_check inputs are: one byte, the size of each read
(0: all at once), then the bytes of the response stream (HTTP/3 frames) or
of the chunked body (what follows the head).

response_h1 inputs are: one flag byte (bit 0: the request was HEAD), one
byte seeding the split points, then the server's bytes.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
NGINX = b"Server: nginx/1.22.1\r\nDate: Sun, 23 Nov 2025 11:00:00 GMT\r\n"


def h1(name, data, head=False, seed=7):
    write("response_h1", name, bytes([1 if head else 0, seed]) + data)


def h2(name, data, read_len=7):
    write("h2_client", name, bytes([read_len]) + data)


def write(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


fixed = b"HTTP/1.1 200 OK\r\n" + NGINX + b"Content-Type: text/plain\r\nContent-Length: 13\r\nConnection: keep-alive\r\n\r\nHello, World!"
h1("fixed", fixed)
h1("fixed_split_small", fixed, seed=1)
h1("chunked_trailers_ext", b"HTTP/1.1 200 OK\r\n" + NGINX + b"Transfer-Encoding: chunked\r\n\r\n"
   b"5;name=value\r\nHello\r\n8; quoted=\"a;b\"\r\n, World!\r\n0\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n")
h1("continue_then_200", b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
h1("no_content_204", b"HTTP/1.1 204 No Content\r\n" + NGINX + b"\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
h1("not_modified_304", b"HTTP/1.1 304 Not Modified\r\n" + NGINX + b"ETag: \"5f-1\"\r\nContent-Length: 95\r\n\r\n")
h1("head", b"HTTP/1.1 200 OK\r\n" + NGINX + b"Content-Length: 612\r\nContent-Type: text/html\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 612\r\n\r\n", head=True)
h1("close_delimited", b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody until the server closes")
h1("http10_close", b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nold style")
h1("pipelined_pair", fixed + b"HTTP/1.1 404 Not Found\r\n" + NGINX + b"Content-Type: text/html\r\nContent-Length: 9\r\n\r\nnot found")
h1("pipelined_chunked_then_fixed", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" + fixed)
h1("error_500_close", b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\nConnection: close\r\n\r\noops!")
h1("obs_fold_and_spaces", b"HTTP/1.1 200 OK\r\nX-Long: a\r\n b\r\nContent-Length:   3  \r\n\r\nabc")
h1("bare_lf", b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok")
h1("conflicting_lengths", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc")
h1("signed_length", b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok")
h1("chunk_without_crlf", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n")
h1("status_000", b"HTTP/1.1 000 Zero\r\nContent-Length: 0\r\n\r\n")
h1("huge_chunk_size", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n")


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


DATA, HEADERS, RST, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, ACK, END_HEADERS = 1, 1, 4
ACK_SETTINGS = frame(SETTINGS, ACK, 0)
STATUS_200, STATUS_204, STATUS_404, STATUS_500 = b"\x88", b"\x89", b"\x8d", b"\x8e"

h2("status_only", ACK_SETTINGS + frame(HEADERS, END_HEADERS | END_STREAM, 1, STATUS_200))
h2("with_body", ACK_SETTINGS + frame(HEADERS, END_HEADERS, 1, STATUS_200 + b"\x5f\x0atext/plain")
      + frame(DATA, 0, 1, b"Hello, ") + frame(DATA, END_STREAM, 1, b"World!"))
h2("trailers", ACK_SETTINGS + frame(HEADERS, END_HEADERS, 1, STATUS_200) + frame(DATA, 0, 1, b"x" * 100)
      + frame(HEADERS, END_HEADERS | END_STREAM, 1, b"\x40\x0bgrpc-status\x010"))
h2("continuation", ACK_SETTINGS + frame(HEADERS, 0, 1, STATUS_404) + frame(CONTINUATION, END_HEADERS | END_STREAM, 1, b"\x5c\x010"))
h2("goaway", frame(GOAWAY, 0, 0, struct.pack(">II", 0, 0)))
h2("rst_stream", ACK_SETTINGS + frame(RST, 0, 1, struct.pack(">I", 2)))
h2("ping_window_update", ACK_SETTINGS + frame(PING, 0, 0, b"12345678") + frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1000))
      + frame(HEADERS, END_HEADERS | END_STREAM, 1, STATUS_204))
h2("settings_params", frame(SETTINGS, 0, 0, struct.pack(">HI", 3, 100) + struct.pack(">HI", 4, 65535)) + ACK_SETTINGS
      + frame(HEADERS, END_HEADERS | END_STREAM, 1, STATUS_500))
h2("http1_reply", b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


def h3(name, data, read_len=5):
    write("h3_response", name, bytes([read_len]) + data)


def chunked(name, data, read_len=3):
    write("chunked_check", name, bytes([read_len]) + data)


# HEADERS (type 1) with a QPACK block: required insert count 0, base 0, then
# the static table's :status 200 (index 25) or 404 (index 27); DATA (type 0).
h3("status_only", b"\x01\x03\x00\x00\xd9")
h3("with_body", b"\x01\x03\x00\x00\xdb" + b"\x00\x05hello")
h3("unknown_frame", b"\x21\x02xx" + b"\x01\x03\x00\x00\xd9")
h3("huge_headers", b"\x01\x80\x10\x00\x01" + b"\x00" * 64)
chunked("simple", b"5\r\nhello\r\n0\r\n\r\n")
chunked("trailers", b"2\r\nok\r\n0\r\nX-Trailer: 1\r\n\r\n")
chunked("extension", b"3;name=value\r\nabc\r\n0\r\n\r\n")
chunked("huge_size_after_a_chunk", b"1\r\na\r\nffffffffffffffff\r\n")
