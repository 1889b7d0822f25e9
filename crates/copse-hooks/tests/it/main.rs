mod spawn;
