/** The largest request body the server reads (kube-apiserver's 3 MiB), for any caller who passed the gate. */
export const maxBodyBytes = 3 * 1024 * 1024;
