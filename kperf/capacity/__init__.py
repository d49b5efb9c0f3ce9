"""Can this cluster carry my load? A user's workload file (:mod:`.workload`), sustained, pushed to its limit by a
search that cannot settle on nonsense (:mod:`.search`), drained after a backlog, and a verdict (:mod:`.verdict`);
:mod:`.run` measures it against a cluster."""
