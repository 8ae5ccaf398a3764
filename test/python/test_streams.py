"""Which stream a call runs on (CPU: stream objects are stand-ins with each framework's API)."""

import pytest

from tilemlir.runtime.args import ArgumentError
from tilemlir.runtime.streams import LEGACY_DEFAULT_STREAM, current_stream, stream_handle


class TorchLike:            # torch.cuda.Stream
    cuda_stream = 0x1234


class CupyLike:             # cupy.cuda.Stream
    ptr = 0x2345


class CoreLike:             # cuda.core Stream: the __cuda_stream__ protocol
    def __cuda_stream__(self):
        return (0, 0x3456)


class HandleLike:           # an object exposing only a handle
    handle = 0x4567


@pytest.mark.parametrize("stream, handle", [(TorchLike(), 0x1234), (CupyLike(), 0x2345),
                                            (CoreLike(), 0x3456), (HandleLike(), 0x4567),
                                            (0, 0), (0x5678, 0x5678)])
def test_stream_objects_and_raw_handles(stream, handle):
    assert stream_handle(stream) == handle


@pytest.mark.parametrize("bad, message", [(-1, "non-negative"), (True, "stream object"),
                                          ("s", "got str"), (1.5, "got float")])
def test_bad_streams_name_the_parameter(bad, message):
    with pytest.raises(ArgumentError, match=f"stream.*{message}"):
        stream_handle(bad)


def test_other_frameworks_use_the_legacy_default_stream():
    class DLPackOnly:
        pass
    assert current_stream(DLPackOnly(), 0) == LEGACY_DEFAULT_STREAM
