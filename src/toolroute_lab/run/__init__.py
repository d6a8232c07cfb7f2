"""Running the notebooks: the pipeline behind `toolroute run`, the declaration of each experiment, time estimates and redrawing figures from committed tables."""
