// Filled by a later issue (see the repository README); nothing is public yet.
export {};
