"""Where a driver's load processes run: spawned on this host, or on the workers of a Dask cluster (``--workers``).

One load needs more than one host can give (the published studies drove
their brokers from three or four client machines), so the drivers' calls
(picklable specs in, picklable reports out) can run on the workers of a Dask
``distributed`` scheduler instead of this host. Dask is an existing,
well-kept engine; kperf adds no protocol or socket of its own. Without
``--workers`` the calls run as spawned processes here: the same driver code,
without a scheduler in between (docs/workers.md says why this is the default,
measured).

One module per idea:

* :mod:`.dispatch`: the entry, here or on the workers: a run's load processes (:func:`~.dispatch.run`), and
  several runs that load at once, as one group (:func:`~.dispatch.together`);
* :mod:`.peers`: what a load process sees of the others of its run (the start barrier, the shared count);
* :mod:`.local`: this host's processes; :mod:`.bridge`: one process whose peers are elsewhere;
* :mod:`.scheduler`: which scheduler (``$KPERF_WORKERS``), reaching it; :mod:`.checks`: its workers, checked
  once per process;
* :mod:`.placement`: which worker runs each load process; :mod:`.on_workers`: a group of runs placed and
  coordinated there; :mod:`.protocol`, :mod:`.task` and :mod:`.coordinator`: how a run's tasks and this client
  talk; :mod:`.record`: where the load came from and what it used (``env.load_*``, ``res.*``).

This package imports no driver: the drivers import it.
"""
