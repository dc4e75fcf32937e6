package main

import "errors"

func tablePhysical(e *env) (*Table, error) { return nil, errNotBuilt }
func tableCapacity(e *env) (*Table, error) { return nil, errNotBuilt }

var errNotBuilt = errors.New("not built yet")
