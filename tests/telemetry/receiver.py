"""An OTLP/HTTP receiver for tests: a small HTTP server that keeps what exporters
POST to ``/v1/traces`` and ``/v1/metrics`` and decodes it with the protocol's own
protobuf definitions (``opentelemetry-proto``), as a collector would."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span


@dataclass
class Received:
    """Everything the receiver was sent, decoded."""

    posts: list[tuple[str, str, bytes]] = field(default_factory=list)
    """(path, content type, body) of every POST, in order."""
    url: str = ""

    def spans(self) -> list[Span]:
        found: list[Span] = []
        for path, _, body in self.posts:
            if path == "/v1/traces":
                request = ExportTraceServiceRequest.FromString(body)
                for resource in request.resource_spans:
                    for scope in resource.scope_spans:
                        found.extend(scope.spans)
        return found

    def resource_attributes(self) -> list[dict[str, Any]]:
        found = []
        for path, _, body in self.posts:
            if path == "/v1/traces":
                for resource in ExportTraceServiceRequest.FromString(body).resource_spans:
                    found.append(attributes(resource.resource.attributes))
        return found

    def metric_points(self) -> dict[str, list[tuple[dict[str, Any], float]]]:
        """Each metric's data points as (attributes, value): sums and counts of
        histograms, from the last export of each (cumulative temporality)."""
        points: dict[str, list[tuple[dict[str, Any], float]]] = {}
        for path, _, body in self.posts:
            if path != "/v1/metrics":
                continue
            request = ExportMetricsServiceRequest.FromString(body)
            for resource in request.resource_metrics:
                for scope in resource.scope_metrics:
                    for metric in scope.metrics:
                        kind = metric.WhichOneof("data")
                        if kind == "sum":
                            data = [
                                (attributes(p.attributes), _number(p))
                                for p in metric.sum.data_points
                            ]
                        elif kind == "histogram":
                            data = [(attributes(p.attributes), float(p.count))
                                    for p in metric.histogram.data_points]  # fmt: skip
                        else:
                            continue
                        points[metric.name] = data
        return points


def _number(point: Any) -> float:
    return float(point.as_int) if point.WhichOneof("value") == "as_int" else point.as_double


def value(any_value: AnyValue) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: value(pair.value) for pair in pairs}


@contextmanager
def otlp_receiver() -> Iterator[Received]:
    received = Received()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            with lock:
                received.posts.append((self.path, self.headers.get("Content-Type", ""), body))
            reply = (
                ExportTraceServiceResponse()
                if self.path == "/v1/traces"
                else ExportMetricsServiceResponse()
            ).SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    received.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield received
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
