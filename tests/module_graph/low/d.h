void high_hook(void);
