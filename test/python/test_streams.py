"""Which stream a call runs on (CPU: stream objects are stand-ins with each framework's API)."""

import pytest

from tilemlir.runtime.args import ArgumentError
from tilemlir.runtime.streams import LEGACY_DEFAULT_STREAM, current_stream, stream_handle


class ProtocolStream:       # cuda.core Stream, torch >= 2.6 and cupy streams: __cuda_stream__
    def __cuda_stream__(self):
        return (0, 0x3456)


class OldTorchStream:       # torch.cuda.Stream before the protocol
    __module__ = "torch.cuda.streams"
    cuda_stream = 0x1234


class OldCupyStream:        # cupy.cuda.Stream before the protocol
    __module__ = "cupy.cuda.stream"
    ptr = 0x2345


class Unknown:              # an object that merely has a handle-like attribute is not guessed at
    handle = 0x4567


def test_stream_objects_and_raw_handles():
    from cuda.bindings import driver
    for stream, handle in [(ProtocolStream(), 0x3456), (OldTorchStream(), 0x1234),
                           (OldCupyStream(), 0x2345), (driver.CUstream(0x789A), 0x789A),
                           (0, 0), (0x5678, 0x5678)]:
        assert stream_handle(stream) == handle


@pytest.mark.parametrize("bad, message", [(-1, "non-negative"), (True, "stream object"),
                                          ("s", "got str"), (1.5, "got float"),
                                          (Unknown(), "got Unknown")])
def test_bad_streams_name_the_parameter(bad, message):
    with pytest.raises(ArgumentError, match=f"stream.*{message}"):
        stream_handle(bad)


def test_a_broken_protocol_is_named():
    class Broken:
        def __cuda_stream__(self):
            return 0x1234
    with pytest.raises(ArgumentError, match=r"__cuda_stream__\(\) must return \(version, handle"):
        stream_handle(Broken())


def test_other_frameworks_use_the_legacy_default_stream():
    class DLPackOnly:
        pass
    assert current_stream(DLPackOnly(), 0) == LEGACY_DEFAULT_STREAM
