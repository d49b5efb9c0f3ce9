"""kperf's native hot loops: the producer's send / pace / acknowledge loop and the consumer's read / verify loop in C
over librdkafka's own API (the library the confluent-kafka wheel ships), loaded with ctypes, so that the load
generator runs at librdkafka's speed while keeping every guarantee of the Python loops (issue 25).

``make native`` builds it into the cache; :mod:`kperf.drivers.native.library` finds it and says why not when it
cannot (the Python loops then run).
"""
