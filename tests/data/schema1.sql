-- A tuning database written by sssp-tune schema 1 (trials in sssp_trials), dumped with
-- sqlite3 .dump: the input of the schema-1 upgrade test.
CREATE TABLE sssp_schema (
	id INTEGER NOT NULL, 
	version INTEGER NOT NULL, 
	PRIMARY KEY (id)
);
INSERT INTO sssp_schema VALUES(1,1);
CREATE TABLE sssp_devices (
	id INTEGER NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	uuid VARCHAR(100) NOT NULL, 
	compute_capability VARCHAR(16) NOT NULL, 
	sm_count INTEGER NOT NULL, 
	driver_version VARCHAR(64) NOT NULL, 
	cuda_version VARCHAR(64) NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (uuid)
);
INSERT INTO sssp_devices VALUES(1,'NVIDIA H200','GPU-0000-aaaa','9.0',132,'580.65','13.0');
CREATE TABLE sssp_kernel_versions (
	id INTEGER NOT NULL, 
	digest VARCHAR(128) NOT NULL, 
	compile_options VARCHAR(1000) NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (digest, compile_options)
);
INSERT INTO sssp_kernel_versions VALUES(1,'abc123','-O3');
CREATE TABLE sssp_graph_classes (
	id INTEGER NOT NULL, 
	size VARCHAR(16) NOT NULL, 
	degree VARCHAR(16) NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (size, degree)
);
INSERT INTO sssp_graph_classes VALUES(1,'49k','deg200');
CREATE TABLE sssp_tuning_runs (
	id INTEGER NOT NULL, 
	device_id INTEGER NOT NULL, 
	kernel_version_id INTEGER NOT NULL, 
	graph_class_id INTEGER NOT NULL, 
	algorithm VARCHAR(32) NOT NULL, 
	variant VARCHAR(32) NOT NULL, 
	kernel VARCHAR(16) NOT NULL, 
	strategy VARCHAR(64) NOT NULL, 
	instance VARCHAR(500) NOT NULL, 
	replay BOOLEAN NOT NULL, 
	budget INTEGER, 
	seed INTEGER NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	started_at DATETIME NOT NULL, 
	finished_at DATETIME, 
	wall_seconds FLOAT, 
	PRIMARY KEY (id), 
	FOREIGN KEY(device_id) REFERENCES sssp_devices (id), 
	FOREIGN KEY(kernel_version_id) REFERENCES sssp_kernel_versions (id), 
	FOREIGN KEY(graph_class_id) REFERENCES sssp_graph_classes (id)
);
INSERT INTO sssp_tuning_runs VALUES(1,1,1,1,'crauser','successors','all','exhaustive','random seed=0',0,NULL,1,'finished','2026-11-30 22:37:26.598825','2026-11-30 22:37:26.631504',2.5);
CREATE TABLE sssp_trials (
	id INTEGER NOT NULL, 
	run_id INTEGER NOT NULL, 
	number INTEGER NOT NULL, 
	kernel VARCHAR(16) NOT NULL, 
	config_label VARCHAR(32) NOT NULL, 
	block_size INTEGER NOT NULL, 
	l1 VARCHAR(4) NOT NULL, 
	lanes INTEGER NOT NULL, 
	status VARCHAR(32) NOT NULL, 
	times_ms TEXT NOT NULL, 
	median_ms FLOAT, 
	mean_ms FLOAT, 
	std_ms FLOAT, 
	min_ms FLOAT, 
	max_ms FLOAT, 
	applied_l1 VARCHAR(64) NOT NULL, 
	message TEXT NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (run_id, kernel, config_label), 
	FOREIGN KEY(run_id) REFERENCES sssp_tuning_runs (id) ON DELETE CASCADE
);
INSERT INTO sssp_trials VALUES(1,1,0,'relax','256-N',256,'N',1,'ok','[1.0, 3.0, 2.0]',2.0,2.0,0.81649658092772603446,1.0,3.0,'PREFER_NONE','','2026-11-30 22:37:26.615617');
INSERT INTO sssp_trials VALUES(2,1,1,'relax','128-A/x4',128,'A',4,'ok','[0.5, 0.75]',0.625,0.625,0.125,0.5,0.75,'','','2026-11-30 22:37:26.620332');
INSERT INTO sssp_trials VALUES(3,1,2,'min','512-N',512,'N',1,'launch_failed','[]',NULL,NULL,NULL,NULL,NULL,'','too many resources','2026-11-30 22:37:26.628923');
CREATE TABLE sssp_best_configs (
	id INTEGER NOT NULL, 
	device_id INTEGER NOT NULL, 
	kernel_version_id INTEGER NOT NULL, 
	graph_class_id INTEGER NOT NULL, 
	algorithm VARCHAR(32) NOT NULL, 
	variant VARCHAR(32) NOT NULL, 
	relax_label VARCHAR(32) NOT NULL, 
	min_label VARCHAR(32) NOT NULL, 
	update_label VARCHAR(32) NOT NULL, 
	tuned_relax_label VARCHAR(32) NOT NULL, 
	tuned_min_label VARCHAR(32) NOT NULL, 
	tuned_update_label VARCHAR(32) NOT NULL, 
	tuned_median_ms FLOAT NOT NULL, 
	default_median_ms FLOAT NOT NULL, 
	speedup FLOAT NOT NULL, 
	n_sources INTEGER NOT NULL, 
	kept_default BOOLEAN NOT NULL, 
	replay BOOLEAN NOT NULL, 
	run_id INTEGER, 
	updated_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (device_id, kernel_version_id, graph_class_id, algorithm, variant), 
	FOREIGN KEY(device_id) REFERENCES sssp_devices (id), 
	FOREIGN KEY(kernel_version_id) REFERENCES sssp_kernel_versions (id), 
	FOREIGN KEY(graph_class_id) REFERENCES sssp_graph_classes (id), 
	FOREIGN KEY(run_id) REFERENCES sssp_tuning_runs (id) ON DELETE SET NULL
);
INSERT INTO sssp_best_configs VALUES(1,1,1,1,'crauser','successors','128-A/x4','256-N','256-N','128-A/x4','256-N','256-N',8.0,10.0,1.25,20,0,0,1,'2026-05-01 12:00:00.000000');
CREATE INDEX ix_sssp_devices_name ON sssp_devices (name);
CREATE INDEX ix_sssp_kernel_versions_digest ON sssp_kernel_versions (digest);
CREATE INDEX ix_sssp_tuning_runs_device_id ON sssp_tuning_runs (device_id);
CREATE INDEX ix_sssp_tuning_runs_status ON sssp_tuning_runs (status);
CREATE INDEX ix_sssp_trials_run_id ON sssp_trials (run_id);
CREATE INDEX ix_sssp_best_configs_device_id ON sssp_best_configs (device_id);
