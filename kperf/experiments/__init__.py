"""The experiments: one module each, defining and registering one :class:`~kperf.study.experiment.Experiment`.

The registry (:mod:`kperf.study.experiment`) imports every module of this
package; an experiment needs nothing else but its notebook,
``notebooks/<name>.ipynb``. docs/development.md says how to add one.
"""
