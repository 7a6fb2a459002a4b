"""The stage layer: one small module per DVC stage, named as the stage.

Each module exposes ``run(params)``: read the stage's section of the validated params,
call the library (``curll``), write the stage's outputs. ``pipeline.tools.cli`` turns them
into the ``curll`` command that ``dvc.yaml`` runs.
"""
